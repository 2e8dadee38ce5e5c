import { startClockedProvider, newBrowser, pathOf, type ClockedProvider } from '../support/standard-op';
import { buildClient } from '../factories';
import { authorizeQuery } from '../support/account-flows';
import { startGoogleStandIn, type GoogleStandIn } from '../support/upstreams/google-stand-in';

/**
 * An upstream whose authorization endpoint lives on another origin than its issuer: the sign-in
 * page's CSP form-action names the issuer's origin only, so a 303 from the button's form to the
 * endpoint would be blocked by the browser. The button answers a page that moves on by a 0-second
 * refresh instead, and the sign-in completes.
 */

let p: ClockedProvider;
let g: GoogleStandIn;

beforeAll(async () => {
  p = await startClockedProvider();
  g = await startGoogleStandIn({ authorizeOnOtherOrigin: true });
});
afterAll(async () => {
  await g.close();
  await p.close();
});

async function downstream(standIn: GoogleStandIn) {
  const s = p.t.services;
  const { platform } = await s.platforms.createPlatform(`Downstream ${Math.random().toString(36).slice(2, 8)}`);
  await s.federation.providers.create(platform.id, {
    kind: 'google',
    issuer: standIn.issuer,
    clientId: standIn.clientId,
    clientSecret: standIn.clientSecret,
  });
  const app = await buildClient(s, platform.id, { redirectUris: ['https://app.example/cb'] });
  return { platform, app };
}

it('the button answers a page that refreshes to the other origin (no 303 the form-action would block), then the sign-in completes', async () => {
  g.user = {
    sub: 'g-cross-1',
    email: 'cross@example.com',
    email_verified: true,
    given_name: 'Cross',
    family_name: 'Origin',
  };
  const { platform, app } = await downstream(g);
  const down = newBrowser(p);
  const page = await down.get(
    `/oauth/authorize?${authorizeQuery({ id: platform.id }, app, { scope: 'openid email profile' })}`,
  );
  const formAction = /form-action ([^;]+)/.exec(String(page.res.headers['content-security-policy']))?.[1] ?? '';
  expect(formAction).toContain(new URL(g.issuer).origin);
  expect(formAction).not.toContain('localhost');

  const started = await down.submit('/upstream/google', {});
  expect(started.res.status).toBe(200);
  expect(started.location).toBeUndefined();
  const refresh = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(down.html)?.[1];
  expect(refresh).toBeDefined();
  const authorizationUrl = new URL(refresh!.replace(/&amp;/g, '&'));
  expect(authorizationUrl.origin).toBe(g.base.replace('127.0.0.1', 'localhost'));
  expect(down.html).toContain('Continue to Google');

  const back = await fetch(authorizationUrl, { redirect: 'manual' });
  const callback = back.headers.get('location')!;
  await down.get(pathOf(callback));
  expect(down.pageTitle()).toBe('Create your account');
});

it('an upstream whose endpoint is on the issuer origin still gets the plain 303', async () => {
  const same = await startGoogleStandIn();
  try {
    const { platform, app } = await downstream(same);
    const down = newBrowser(p);
    await down.get(`/oauth/authorize?${authorizeQuery({ id: platform.id }, app, { scope: 'openid email profile' })}`);
    const started = await down.submit('/upstream/google', {});
    expect(started.res.status).toBe(303);
    expect(new URL(started.location!).origin).toBe(same.base);
  } finally {
    await same.close();
  }
});
