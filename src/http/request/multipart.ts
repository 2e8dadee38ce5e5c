import express, { type RequestHandler } from 'express';

/**
 * An upload form (multipart/form-data: the account picture, the console's logo) read through the
 * platform's own parser (the WHATWG Request of Node's fetch), so it works without JavaScript and
 * without another dependency. Mounted before the CSRF check, which needs `_csrf` from the text
 * fields: those land in req.body, the file (field `fileField`) in res.locals.upload. `maxBytes`
 * bounds the whole body.
 */
export function multipartForm(fileField: string, maxBytes: number): RequestHandler[] {
  const raw = express.raw({ type: 'multipart/form-data', limit: maxBytes });
  const parse: RequestHandler = async (req, res, next) => {
    if (!Buffer.isBuffer(req.body)) return next();
    const form = await new Request('http://upload.invalid/', {
      method: 'POST',
      headers: { 'content-type': String(req.headers['content-type']) },
      body: new Uint8Array(req.body),
    })
      .formData()
      .catch(() => undefined);
    const body: Record<string, string> = {};
    form?.forEach((value, key) => {
      if (typeof value === 'string') body[key] = value;
      else if (key === fileField) res.locals.upload = value;
    });
    req.body = body;
    next();
  };
  return [raw, parse];
}
