import path from 'node:path';
import { Router } from 'express';

/**
 * The @simplewebauthn/browser bundle (UMD, global `SimpleWebAuthnBrowser`), served from the
 * installed package so it always matches the server library's version; public/passkeys.js uses it.
 */
export function passkeyAssetsRouter(): Router {
  const r = Router();
  const bundle = path.join(
    path.dirname(require.resolve('@simplewebauthn/browser')),
    '..',
    'dist',
    'bundle',
    'index.umd.min.js',
  );
  r.get('/static/vendor/simplewebauthn-browser.js', (_req, res, next) => {
    res.sendFile(
      bundle,
      { maxAge: '1h', headers: { 'Content-Type': 'text/javascript; charset=utf-8' } },
      (err) => err && next(err),
    );
  });
  return r;
}
