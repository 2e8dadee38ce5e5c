import { Router, type RequestHandler, type Response } from 'express';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import { isUuid } from '../../domain/ids';
import { OAuthError } from '../../errors';
import { PICTURE_MAX_BYTES } from '../../services/account/profile.service';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { field, redirectSaved, setFlash, requireAccount } from '../session/account-session';
import { accountPageRenderer, errorsByField } from '../pages/account.page';
import { accountUrl } from '../urls';
import { multipartForm } from '../request/multipart';

/** The picture section of the account page, and GET /pictures/… serving uploaded pictures. */
export function accountPictureRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const render = accountPageRenderer(s, deps);
  const form = [resolvePlatform(s), issueCsrf, requireCsrf, requireAccount(s)];
  const user = (res: Response) => res.locals.accountUser!;
  const done = async (req: Parameters<RequestHandler>[0], res: Response, message: string) => {
    setFlash(req, res.locals.platform.id, message);
    await redirectSaved(req, res, accountUrl(res.locals.platform.id));
  };

  // Larger than the picture limit, so an oversized picture gets the form's message instead of a 413 page.
  r.post('/account/picture', ...multipartForm('picture', PICTURE_MAX_BYTES * 4), ...form, async (req, res) => {
    const file = res.locals.upload as Blob | undefined;
    const bytes = file ? Buffer.from(await file.arrayBuffer()) : Buffer.alloc(0);
    const result = await s.account.profile.setPictureUpload(user(res), bytes);
    if (!result.ok)
      return render(
        req,
        res,
        user(res),
        { fieldErrors: errorsByField(result.errors), formError: 'account:errors.pictureNotChanged' },
        400,
      );
    await done(req, res, res.locals.t('account:flash.pictureUpdated'));
  });

  r.post('/account/picture-url', ...form, async (req, res) => {
    const url = field(req.body, 'picture_url', 4096);
    const result = await s.account.profile.setPictureUrl(user(res), url);
    if (!result.ok)
      return render(
        req,
        res,
        user(res),
        {
          values: { picture_url: url },
          fieldErrors: errorsByField(result.errors),
          formError: 'account:errors.pictureNotChanged',
        },
        400,
      );
    await done(req, res, res.locals.t('account:flash.pictureUpdated'));
  });

  r.post('/account/picture/remove', ...form, async (req, res) => {
    await s.account.profile.removePicture(user(res));
    await done(req, res, res.locals.t('account:flash.pictureRemoved'));
  });

  r.get('/pictures/:platformId/:userId/:version', async (req, res) => {
    const { platformId, userId, version } = req.params;
    const picture =
      isUuid(platformId) && isUuid(userId)
        ? await s.account.profile.findPicture(platformId, userId, version)
        : undefined;
    if (!picture) throw new OAuthError('not_found', 'No such picture');
    // The version is in the URL: a new picture gets a new URL, so this one never changes.
    res
      .set({
        'Content-Type': picture.contentType,
        'Cache-Control': 'public, max-age=31536000, immutable',
        'Content-Security-Policy': "default-src 'none'; sandbox",
        'Content-Disposition': 'inline',
        'Cross-Origin-Resource-Policy': 'cross-origin',
      })
      .send(picture.bytes);
  });

  return r;
}
