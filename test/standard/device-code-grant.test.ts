import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient } from '../factories';
import { jwtPayload, userinfo } from '../support/account-flows';
import { answerDevice, deviceSetup, enterCode, poll, startDevice, type DeviceSetup } from '../support/device';
import { DEVICE_CODE_GRANT } from '../../src/domain/client';

// The token endpoint's device_code grant (RFC 8628 §3.4–3.5) on a standard platform: every polling
// answer, the tokens once approved (as the code grant issues them), single use, the binding to the
// client that asked. The clock is the test's (deps.now): polls are "too fast" by it, never by timing.
let clock = Date.now();
const now = () => new Date(clock);
const tick = (seconds: number) => (clock += seconds * 1000);
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({}, now);
});
afterAll(() => t.close());

const header = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString('utf8'));
const auditKinds = async (d: DeviceSetup) =>
  (
    await t.database
      .db('audit_events')
      .where({ platform_id: d.platform.id })
      .whereLike('kind', 'device_authorization.%')
      .orderBy('id')
  ).map((e) => e.kind);

describe('while the person has not answered', () => {
  it('answers authorization_pending, slow_down when polled too soon, and grows the interval by 5 s each time', async () => {
    const d = await deviceSetup(t.services);
    const { device_code } = await startDevice(t.app, d);
    expectOAuthError(await poll(t.app, d, device_code), 400, 'authorization_pending');
    // Again at once: too fast; the interval becomes 10 s.
    const fast = await poll(t.app, d, device_code);
    expectOAuthError(fast, 400, 'slow_down');
    expect(fast.body.error_description).toContain('10 seconds');
    // 6 s later: under the new 10 s, so slow_down again (15 s).
    tick(6);
    expectOAuthError(await poll(t.app, d, device_code), 400, 'slow_down');
    // Waiting the full 15 s is fine.
    tick(15);
    expectOAuthError(await poll(t.app, d, device_code), 400, 'authorization_pending');
    tick(15);
    expectOAuthError(await poll(t.app, d, device_code), 400, 'authorization_pending');
    const row = await t.database.db('device_authorizations').where({ platform_id: d.platform.id }).first();
    expect(row.interval_seconds).toBe(15);
  });

  it('answers expired_token once the code has expired', async () => {
    const d = await deviceSetup(t.services);
    const { device_code, expires_in } = await startDevice(t.app, d);
    tick(expires_in + 1);
    expectOAuthError(await poll(t.app, d, device_code), 400, 'expired_token');
  });
});

describe('once approved', () => {
  it('issues tokens as the code grant does: an RFC 9068 access token, an ID token, a refresh token', async () => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d, { scope: 'openid email offline_access' });
    tick(5);
    expectOAuthError(await poll(t.app, d, start.device_code), 400, 'authorization_pending');
    await answerDevice(t.app, start.user_code, d.user.email);
    tick(5);
    const res = await poll(t.app, d, start.device_code).expect(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid email offline_access' });
    expect(res.body.refresh_token).toMatch(/^rt_/);
    expect(header(res.body.access_token).typ).toBe('at+jwt');
    expect(jwtPayload(res.body.access_token)).toMatchObject({
      iss: `http://issuer.test/platforms/${d.platform.id}`,
      sub: d.user.id,
      client_id: d.client.id,
      aud: d.client.id,
      scope: 'openid email offline_access',
      amr: ['pwd'],
    });
    const id = jwtPayload(res.body.id_token);
    expect(id).toMatchObject({ sub: d.user.id, aud: d.client.id, email: d.user.email, amr: ['pwd'] });
    expect(id.sid).toBeUndefined(); // the device is not the browser that approved it
    // The access token works at userinfo, and the refresh token refreshes.
    expect((await userinfo(t.app, d.platform, res.body.access_token)).body.email).toBe(d.user.email);
    const refreshed = await request(t.app)
      .post(`${d.issuerPath}/oauth/token`)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: res.body.refresh_token, client_id: d.client.id })
      .expect(200);
    expect(refreshed.body.refresh_token).toMatch(/^rt_/);
    expect(await auditKinds(d)).toEqual([
      'device_authorization.requested',
      'device_authorization.approved',
      'device_authorization.token_issued',
    ]);
  });

  it('leaves out the ID token without openid and the refresh token without offline_access', async () => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d, { scope: 'email' });
    await answerDevice(t.app, start.user_code, d.user.email);
    const res = await poll(t.app, d, start.device_code).expect(200);
    expect(res.body.scope).toBe('email');
    expect(res.body.id_token).toBeUndefined();
    expect(res.body.refresh_token).toBeUndefined();
  });

  it('is single use: a second redemption is invalid_grant', async () => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d);
    await answerDevice(t.app, start.user_code, d.user.email);
    await poll(t.app, d, start.device_code).expect(200);
    tick(5);
    expectOAuthError(await poll(t.app, d, start.device_code), 400, 'invalid_grant');
  });

  it('is bound to the client that asked: another client of the platform gets invalid_grant, the right one its tokens', async () => {
    const d = await deviceSetup(t.services);
    const other = await buildClient(t.services, d.platform.id, {
      type: 'public',
      redirectUris: [],
      grantTypes: [DEVICE_CODE_GRANT],
      scopes: 'openid',
    });
    const start = await startDevice(t.app, d);
    await answerDevice(t.app, start.user_code, d.user.email);
    expectOAuthError(await poll(t.app, { ...d, client: other }, start.device_code), 400, 'invalid_grant');
    await poll(t.app, d, start.device_code).expect(200);
  });

  it('is bound to its platform: the same client id under another issuer finds nothing', async () => {
    const d = await deviceSetup(t.services);
    const elsewhere = await deviceSetup(t.services);
    const start = await startDevice(t.app, d);
    await answerDevice(t.app, start.user_code, d.user.email);
    expectOAuthError(await poll(t.app, elsewhere, start.device_code), 400, 'invalid_grant');
  });

  it('answers expired_token when the code expired after the approval, before the poll', async () => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d);
    await answerDevice(t.app, start.user_code, d.user.email);
    tick(start.expires_in + 1);
    expectOAuthError(await poll(t.app, d, start.device_code), 400, 'expired_token');
  });

  it('gives the access token the named resource as its audience (RFC 8707)', async () => {
    const d = await deviceSetup(t.services);
    await t.services.resources.create(d.platform.id, {
      uri: 'https://tv.example/api',
      name: 'TV API',
      scopes: [{ name: 'tv:watch', description: 'Watch programmes' }],
    });
    const start = await startDevice(t.app, d, { scope: 'tv:watch', resource: 'https://tv.example/api' });
    const b = await enterCode(t.app, start.user_code, d.user.email);
    expect(b.html).toContain('TV API');
    expect(b.html).toContain('Watch programmes');
    await b.submit('/consent', { decision: 'allow' });
    // A resource the authorization did not name: invalid_target, and the code stays unspent.
    expectOAuthError(
      await poll(t.app, d, start.device_code, { resource: 'https://other.example/' }),
      400,
      'invalid_target',
    );
    const res = await poll(t.app, d, start.device_code).expect(200);
    expect(jwtPayload(res.body.access_token)).toMatchObject({ aud: 'https://tv.example/api', scope: 'tv:watch' });
  });
});

describe('once denied', () => {
  it('answers access_denied, and keeps answering it', async () => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d);
    const b = await answerDevice(t.app, start.user_code, d.user.email, 'deny');
    expect(b.pageTitle()).toBe('Device not connected');
    expectOAuthError(await poll(t.app, d, start.device_code), 400, 'access_denied');
    tick(5);
    expectOAuthError(await poll(t.app, d, start.device_code), 400, 'access_denied');
    expect(await auditKinds(d)).toEqual(['device_authorization.requested', 'device_authorization.denied']);
  });
});
