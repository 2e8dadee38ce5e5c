import { Router } from 'express';
import type { Services } from '../../services';
import { isUuid } from '../../domain/ids';
import { OAuthError } from '../../errors';
import { initialsOf, renderAvatarSvg } from '../../presenters/avatar.presenter';

/** GET /avatars/:platform/:user.svg — the generated picture every user has until they set one. */
export function avatarRouter(s: Services): Router {
  const r = Router();
  r.get('/avatars/:platformId/:file', async (req, res) => {
    const { platformId, file } = req.params;
    const userId = file.replace(/\.svg$/, '');
    const user = isUuid(platformId) && isUuid(userId) ? await s.users.findById(platformId, userId) : undefined;
    if (!user) throw new OAuthError('not_found', 'No such avatar');
    res
      .set({
        'Content-Type': 'image/svg+xml',
        'Cache-Control': 'public, max-age=86400',
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
      })
      .send(renderAvatarSvg({ seed: user.id, initials: initialsOf(user.givenName, user.familyName, user.email) }));
  });
  return r;
}
