import * as client from 'openid-client';
import { codeFlow, setup, startProvider, type Provider } from '../support/rp';

// No grace window: presenting a rotated refresh token is reuse at once.
let p: Provider;
beforeAll(async () => {
  p = await startProvider({ REFRESH_REUSE_GRACE_SECONDS: '0' });
});
afterAll(() => p.close());

it('presenting a rotated refresh token after the grace window revokes the whole family', async () => {
  const s = await setup(p, 'client_secret_basic');
  const { tokens } = await codeFlow(p, s, 'openid email offline_access');
  const rotated = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
  await new Promise((r) => setTimeout(r, 20));

  await expect(client.refreshTokenGrant(s.config, tokens.refresh_token!)).rejects.toMatchObject({
    error: 'invalid_grant',
    status: 400,
  });

  // The legitimate successor and every access token of the family are dead too.
  expect(await client.tokenIntrospection(s.config, rotated.refresh_token!)).toEqual({ active: false });
  for (const at of [tokens.access_token, rotated.access_token]) {
    expect(await client.tokenIntrospection(s.config, at)).toEqual({ active: false });
    await expect(client.fetchUserInfo(s.config, at, s.user.id)).rejects.toMatchObject({ status: 401 });
  }
  await expect(client.refreshTokenGrant(s.config, rotated.refresh_token!)).rejects.toMatchObject({
    error: 'invalid_grant',
  });
});
