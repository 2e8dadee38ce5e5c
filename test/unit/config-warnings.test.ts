import { loadConfig } from '../../src/config';
import { riskySettings } from '../../src/config-warnings';

const warningsFor = (env: Record<string, string>) => riskySettings(loadConfig({ NODE_ENV: 'development', ...env }));

describe('start-up warnings for risky settings', () => {
  it('says nothing for a local development start or a sound production one', () => {
    expect(warningsFor({})).toEqual([]);
    expect(
      warningsFor({
        NODE_ENV: 'production',
        BASE_URL: 'https://id.example.com',
        MASTER_KEY: 'a'.repeat(43),
        SESSION_SECRET: 's'.repeat(32),
        SMTP_URL: 'smtp://mail:25',
        TRUST_PROXY: '1',
      }),
    ).toEqual([]);
  });

  it('warns once for each risky setting', () => {
    const all = warningsFor({ BASE_URL: 'http://192.0.2.2:3000', RATE_LIMIT_SCALE: '0', TRUST_PROXY: 'true' });
    expect(all).toHaveLength(5);
    expect(all[0]).toMatch(/^BASE_URL http:\/\/192\.0\.2\.2:3000 is plain http/);
    expect(all[1]).toMatch(/^NODE_ENV=development on 192\.0\.2\.2:3000/);
    expect(all[2]).toBe('RATE_LIMIT_SCALE=0: rate limiting is off');
    expect(all[3]).toMatch(/^TRUST_PROXY=true trusts every X-Forwarded-For hop/);
    expect(all[4]).toMatch(/^BASE_URL's host 192\.0\.2\.2 is an IP address: passkeys are unavailable/);
  });

  it('says that DEMO_SEED=true is ignored outside development, and only when it was asked for', () => {
    const production = {
      NODE_ENV: 'production',
      BASE_URL: 'https://id.example.com',
      MASTER_KEY: 'a'.repeat(43),
      SESSION_SECRET: 's'.repeat(32),
      SMTP_URL: 'smtp://mail:25',
    };
    expect(warningsFor({ ...production, DEMO_SEED: 'true' })).toEqual([
      'DEMO_SEED=true is ignored: NODE_ENV=production, and the demo platform and client are created only in development',
    ]);
    expect(warningsFor({ NODE_ENV: 'test', DEMO_SEED: '1' })).toEqual([
      expect.stringMatching(/^DEMO_SEED=true is ignored: NODE_ENV=test/),
    ]);
    expect(warningsFor({ ...production, DEMO_SEED: 'false' })).toEqual([]);
    expect(warningsFor({ DEMO_SEED: 'true' })).toEqual([]);
    expect(loadConfig({ ...production, DEMO_SEED: 'true' }).demoSeed).toBe(false);
  });

  it('warns when a rotated key would sign before cached key sets can know it', () => {
    expect(warningsFor({ SIGNING_KEY_PUBLICATION_SECONDS: '600' })).toEqual([
      expect.stringMatching(
        /^SIGNING_KEY_PUBLICATION_SECONDS=600 is shorter than the JWKS's cache lifetime \(3600 s\)/,
      ),
    ]);
    expect(warningsFor({ SIGNING_KEY_PUBLICATION_SECONDS: '3600' })).toEqual([]);
  });
});
