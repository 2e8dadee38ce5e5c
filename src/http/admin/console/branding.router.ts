import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import { LOGO_CONTENT_TYPES, LOGO_MAX_BYTES, platformLogoSrc } from '../../../domain/branding';
import { invalidRequest } from '../../../errors';
import { parseInput } from '../../../services/admin/parse-input';
import { PlatformUpdate } from '../../../wire/admin/platforms.schemas';
import { field, submitForm } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';

/** The branding form's fields, as typed. */
interface BrandingForm {
  logo_url: string;
  accent_color: string;
  support_email: string;
}

/**
 * A platform's branding: logo URL, accent colour and support email in one form (empty
 * clears), the uploaded logo in another (multipart, read by multipartForm in screens.ts before
 * the CSRF check), and removing it. The same service calls, checks and audit as the API and CLI.
 */
export function consoleBrandingRouter(s: Services): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/branding`;
  const platformId = (req: Request) => String(req.params.platformId);

  async function show(
    req: Request,
    res: Response,
    form: { values?: BrandingForm; error?: string; logoError?: string } = {},
    status = 200,
  ) {
    const platform = await s.admin.platforms.get(operatorActor(req, res), platformId(req));
    const b = platform.branding;
    renderConsole(
      req,
      res,
      'branding',
      {
        title: 'Branding',
        values: form.values ?? {
          logo_url: b.logoUrl ?? '',
          accent_color: b.accentColor ?? '',
          support_email: b.supportEmail ?? '',
        },
        accentColor: b.accentColor,
        logoSrc: platformLogoSrc(platform.id, b),
        uploaded: b.logoVersion !== null,
        accept: LOGO_CONTENT_TYPES.join(','),
        maxKiB: LOGO_MAX_BYTES / 1024,
        action: base(req),
        error: form.error ?? form.logoError ?? null,
        failedForm: form.error ? 'fields' : form.logoError ? 'logo' : null,
      },
      status,
    );
  }

  r.get('/admin/platforms/:platformId/branding', (req, res) => show(req, res));

  r.post('/admin/platforms/:platformId/branding', (req, res) => {
    const values: BrandingForm = {
      logo_url: field(req, 'logo_url'),
      accent_color: field(req, 'accent_color'),
      support_email: field(req, 'support_email'),
    };
    return submitForm(
      req,
      res,
      async () => {
        await s.admin.platforms.update(operatorActor(req, res), platformId(req), parseInput(PlatformUpdate, values));
        return { message: 'Branding saved. Every instance shows it within 30 seconds.', to: base(req) };
      },
      (error, status) => show(req, res, { values, error }, status),
    );
  });

  r.post('/admin/platforms/:platformId/branding/logo', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const file = res.locals.upload as Blob | undefined;
        const bytes = file ? Buffer.from(await file.arrayBuffer()) : Buffer.alloc(0);
        if (bytes.length === 0) throw invalidRequest('choose an image file to upload');
        // The browser's type comes from the file name: the content decides (checkLogo), as for the CLI.
        await s.admin.platforms.setLogo(operatorActor(req, res), platformId(req), bytes);
        return { message: 'Logo uploaded.', to: base(req) };
      },
      (logoError, status) => show(req, res, { logoError }, status),
    ),
  );

  r.post('/admin/platforms/:platformId/branding/logo/remove', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        await s.admin.platforms.removeLogo(operatorActor(req, res), platformId(req));
        return { message: 'Uploaded logo removed.', to: base(req) };
      },
      (logoError, status) => show(req, res, { logoError }, status),
    ),
  );

  return r;
}
