import request from 'supertest';
import { buildTestApp, TEST_MASTER_KEY } from '../helpers';

// `upgrade-insecure-requests` makes a browser fetch the stylesheet and follow links over https:
// right behind https, broken pages over plain http on anything but localhost.
describe('the CSP of hosted pages and the scheme of BASE_URL', () => {
  const cspOf = async (env: Record<string, string>) => {
    const t = await buildTestApp(env);
    try {
      const res = await request(t.app).get('/').expect(200);
      return String(res.headers['content-security-policy']);
    } finally {
      await t.close();
    }
  };

  it('has no upgrade-insecure-requests over plain http, on a LAN address too', async () => {
    const csp = await cspOf({ BASE_URL: 'http://192.0.2.2:3000' });
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toContain('upgrade-insecure-requests');
  });

  it('keeps it behind https', async () => {
    const csp = await cspOf({
      NODE_ENV: 'production',
      BASE_URL: 'https://id.example.com',
      SMTP_URL: 'smtp://127.0.0.1:1',
      MASTER_KEY: TEST_MASTER_KEY,
    });
    expect(csp).toContain('upgrade-insecure-requests');
  });
});
