import { Router } from 'express';
import type { Services } from '../../services';
import { OAuthError } from '../../errors';

/** What an uploaded logo may do when opened on its own: nothing (no script, no fetch; inline styles of an SVG only). */
const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/**
 * GET /platforms/:platformId/logo?v=… — a platform's uploaded logo, no session, no
 * token: the pages' <img> loads it. Asked for by its current version it never changes (a new
 * upload has a new version, so a new URL): cached for a year. Without one, or with an old one,
 * the current logo, revalidated every time.
 */
export function platformLogoRouter(s: Services): Router {
  const r = Router();
  r.get('/platforms/:platformId/logo', async (req, res) => {
    const { platformId } = req.params;
    const logo = await s.platforms.findUploadedLogo(platformId);
    if (!logo) throw new OAuthError('not_found', 'This platform has no uploaded logo');
    const current = req.query.v === logo.version;
    res
      .set({
        'Content-Type': logo.contentType,
        'Cache-Control': current ? 'public, max-age=31536000, immutable' : 'no-cache',
        ETag: `"${logo.version}"`,
        'Content-Security-Policy': LOGO_CSP,
        'X-Content-Type-Options': 'nosniff',
        'Content-Disposition': 'inline',
        'Cross-Origin-Resource-Policy': 'cross-origin',
      })
      .send(logo.bytes);
  });
  return r;
}
