import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildOperator, consoleBrowser, signInConsole } from './console-support';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const frameAncestors = (res: request.Response) =>
  /(?:^|;)\s*frame-ancestors ([^;]*)/.exec(String(res.headers['content-security-policy']))?.[1];

describe('admin console response headers', () => {
  it("forbids framing every console response (CSP frame-ancestors 'none', X-Frame-Options DENY): sign-in, screens, errors", async () => {
    const op = await buildOperator(t.services);
    const anonymous = await request(t.app).get('/admin/sign-in');
    const forged = await request(t.app).post('/admin/sign-in').type('form').send({ email: op.email, password: 'x' }); // no CSRF token: 403 page
    const b = consoleBrowser(t.app);
    await signInConsole(b, op.email, () => new Date());
    const responses = {
      anonymous,
      forged,
      platforms: await b.get('/admin/platforms'),
      account: await b.get('/admin/account'),
      missing: await b.get('/admin/nothing-here'),
      redirect: await request(t.app).get('/admin'),
    };
    for (const [name, res] of Object.entries(responses)) {
      expect({ name, frameAncestors: frameAncestors(res), xFrameOptions: res.headers['x-frame-options'] }).toEqual({
        name,
        frameAncestors: "'none'",
        xFrameOptions: 'DENY',
      });
    }
    expect(responses.forged.status).toBe(403);
    expect(responses.missing.status).toBe(404);
  });
});
