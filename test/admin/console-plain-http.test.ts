import request from 'supertest';
import { buildTestApp, TEST_MASTER_KEY } from '../helpers';
import { buildOperator, OPERATOR_PASSWORD } from './console-support';

// Production: BASE_URL is https, so the console's session cookie is Secure and is never set on an
// answer over plain http (a first try at http://host:3000, or a proxy that ends TLS and says nothing).
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({
    NODE_ENV: 'production',
    BASE_URL: 'https://id.example.com',
    SMTP_URL: 'smtp://127.0.0.1:1',
    MASTER_KEY: TEST_MASTER_KEY,
  });
});
afterAll(() => t.close());

const alertOf = (html: string) =>
  /class="alert alert-error[^"]*"[^>]*><p>([^<]*)</.exec(html)?.[1].replace(/&#34;/g, '"') ?? '';
const adminCookie = (res: request.Response) =>
  ((res.headers['set-cookie'] as unknown as string[] | undefined) ?? []).find((c) => c.startsWith('latchkey.admin='));

describe('admin console over plain http in production', () => {
  it('says on the sign-in page that it must be reached over https, naming the https address and TRUST_PROXY', async () => {
    const page = await request(t.app).get('/admin/sign-in');
    expect(page.status).toBe(200);
    const alert = alertOf(page.text);
    expect(alert).toContain('plain http');
    expect(alert).toContain('https://id.example.com/admin/sign-in');
    expect(alert).toContain('X-Forwarded-Proto: https');
    expect(alert).toContain('TRUST_PROXY');
  });

  it('answers a sign-in over plain http with the same message, without checking the password or starting a session', async () => {
    const op = await buildOperator(t.services);
    const res = await request(t.app)
      .post('/admin/sign-in')
      .type('form')
      .send({ email: op.email, password: OPERATOR_PASSWORD });
    expect(res.status).toBe(400);
    expect(alertOf(res.text)).toContain('https://id.example.com/admin/sign-in');
    expect(adminCookie(res)).toBeUndefined();
    const events = (await t.services.audit.list({}, 200)).events.filter((e) => e.actorName === op.email);
    expect(events).toEqual([]);
  });

  it('shows no such message behind a proxy that says the request came over https', async () => {
    const page = await request(t.app).get('/admin/sign-in').set('X-Forwarded-Proto', 'https');
    expect(page.status).toBe(200);
    expect(alertOf(page.text)).toBe('');
    expect(page.text).toContain('name="password"');
  });
});
