import request from 'supertest';
import type { Express } from 'express';
import { DEVICE_CODE_GRANT } from '../../src/domain/client';
import type { Services } from '../../src/services';
import type { NewClientInput } from '../../src/services/platforms.service';
import { buildClient, buildStandardPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser, type Browser } from './browser';
import { basic } from './account-flows';

/**
 * Support for the device authorization grant's tests (RFC 8628): a standard platform with a public
 * device client (a TV app: no redirect URI, no secret) and a user; the device's two requests; and
 * the person's side on BASE_URL/device through the cookie-keeping HTTP browser.
 */
export async function deviceSetup(s: Services, client: Partial<NewClientInput> = {}) {
  const platform = await buildStandardPlatform(s);
  const c = await buildClient(s, platform.id, {
    name: 'Living Room TV',
    type: 'public',
    redirectUris: [],
    grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
    scopes: 'openid profile email offline_access',
    ...client,
  });
  const user = await buildUser(s, platform.id);
  return { platform, client: c, user, issuerPath: `/platforms/${platform.id}` };
}
export type DeviceSetup = Awaited<ReturnType<typeof deviceSetup>>;

/** The client's credentials in the body (public) or as Basic (confidential). */
const authenticate = (req: request.Test, c: DeviceSetup['client'], body: Record<string, string>) =>
  c.secret ? req.set('Authorization', basic(c)).send(body) : req.send({ client_id: c.id, ...body });

/** POST {issuer}/oauth/device_authorization. */
export function requestDevice(app: Express, d: DeviceSetup, body: Record<string, string> = {}) {
  return authenticate(request(app).post(`${d.issuerPath}/oauth/device_authorization`).type('form'), d.client, body);
}

/** The device's poll of {issuer}/oauth/token. */
export function poll(app: Express, d: DeviceSetup, deviceCode: string, body: Record<string, string> = {}) {
  return authenticate(request(app).post(`${d.issuerPath}/oauth/token`).type('form'), d.client, {
    grant_type: DEVICE_CODE_GRANT,
    device_code: deviceCode,
    ...body,
  });
}

/** A device authorization that succeeded: the RFC 8628 §3.2 response. */
export async function startDevice(app: Express, d: DeviceSetup, body: Record<string, string> = {}) {
  const res = await requestDevice(app, d, body);
  if (res.status !== 200) throw new Error(`device authorization: ${res.status} ${res.text}`);
  return res.body as {
    device_code: string;
    user_code: string;
    verification_uri: string;
    verification_uri_complete: string;
    expires_in: number;
    interval: number;
  };
}

/** The code typed at /device; a signed-out browser then signs in. Returns the browser on the page that follows. */
export async function enterCode(app: Express, userCode: string, email?: string, b: Browser = browser(app)) {
  await b.get('/device');
  await b.submit('/device', { user_code: userCode });
  if (email && b.pageTitle() === 'Sign in') await b.submit('/signin', { email, password: TEST_PASSWORD });
  return b;
}

/** The whole person's side: code, sign-in, then Approve (`allow`) or Deny on the consent page. */
export async function answerDevice(
  app: Express,
  userCode: string,
  email: string,
  decision: 'allow' | 'deny' = 'allow',
  b?: Browser,
) {
  const page = await enterCode(app, userCode, email, b);
  if (!page.pageTitle()?.includes('wants to access your account'))
    throw new Error(`expected the consent page:\n${page.html.slice(0, 2000)}`);
  await page.submit('/consent', { decision });
  return page;
}
