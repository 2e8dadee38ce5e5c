import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildTestApp, TEST_ENV } from '../helpers';
import { runCommand } from '../../src/cli/commands';
import { buildPlatform } from '../factories';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const run = (...argv: string[]) => runCommand(t.services, argv);
const count = async (table: string) => Number((await t.database.db(table).count('* as n').first())?.n);

describe('admin CLI commands', () => {
  it('creates a platform with an active key', async () => {
    const out = await run('platform', 'create', '--name', 'Acme');
    expect(out).toMatchObject({
      platform_guid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Acme',
      kid: expect.any(String),
    });
  });

  it('creates a confidential client with a 64-octet secret that is stored sealed', async () => {
    const p = await buildPlatform(t.services);
    const out = await run(
      'client',
      'create',
      '--platform',
      p.id,
      '--name',
      'Web',
      '--type',
      'confidential',
      '--redirect-uri',
      'https://app.example/cb',
      '--redirect-uri',
      'http://127.0.0.1:8080/cb',
      '--scopes',
      'openid email profile',
    );
    expect(out.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Buffer.from(out.client_secret as string, 'base64url').length).toBe(64);
    expect(out.redirect_uris).toEqual(['https://app.example/cb', 'http://127.0.0.1:8080/cb']);
    expect(out.scopes).toBe('openid profile email');
    const row = await t.database.db('clients').where({ id: out.client_id }).first();
    expect(row.sealed_secret).not.toContain(out.client_secret);
  });

  it('creates a public client without a secret', async () => {
    const p = await buildPlatform(t.services);
    const out = await run(
      'client',
      'create',
      '--platform',
      p.id,
      '--name',
      'SPA',
      '--type',
      'public',
      '--redirect-uri',
      'http://[::1]:5173/cb',
      '--scopes',
      'openid',
    );
    expect(out.client_secret).toBeNull();
    expect(out.type).toBe('public');
  });

  it("--resource-server registers a confidential client that may introspect the platform's other clients' tokens", async () => {
    const p = await buildPlatform(t.services);
    const base = [
      'client',
      'create',
      '--platform',
      p.id,
      '--type',
      'confidential',
      '--redirect-uri',
      'https://api.example/cb',
      '--scopes',
      'openid',
    ];
    const api = await run(...base, '--name', 'API', '--resource-server');
    expect(api.is_resource_server).toBe(true);
    expect((await t.database.db('clients').where({ id: api.client_id }).first()).is_resource_server).toBe(true);
    const web = await run(...base, '--name', 'Web');
    expect(web.is_resource_server).toBe(false);
    expect((await t.database.db('clients').where({ id: web.client_id }).first()).is_resource_server).toBe(false);
  });

  it('creates a user with an argon2id hash and a normalised phone', async () => {
    const p = await buildPlatform(t.services);
    const out = await run(
      'user',
      'create',
      '--platform',
      p.id,
      '--email',
      'Grace@Example.com',
      '--password',
      'a long pass phrase',
      '--given-name',
      'Grace',
      '--family-name',
      'Hopper',
      '--birthdate',
      '1990-12-09',
      '--phone',
      '+1 415 555 0123',
      '--email-verified',
    );
    expect(out.sub).toMatch(/^[0-9a-f-]{36}$/);
    const row = await t.database.db('users').where({ id: out.sub }).first();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(row.phone_number).toBe('+14155550123');
    expect(row.email_verified).toBe(true);
    expect(row.email_normalized).toBe('grace@example.com');
  });

  it('rotates a key', async () => {
    const p = await buildPlatform(t.services);
    const out = await run('key', 'rotate', '--platform', p.id);
    expect(out.kid).toEqual(expect.any(String));
    const active = await t.database.db('signing_keys').where({ platform_id: p.id, status: 'active' });
    expect(active.map((k) => k.kid)).toEqual([out.kid]);
  });

  describe('refuses bad input with one clear line and writes nothing', () => {
    const cases: [string, (p: string) => string[], RegExp, string][] = [
      [
        'an unknown platform',
        () => [
          'client',
          'create',
          '--platform',
          '00000000-0000-4000-8000-000000000000',
          '--name',
          'X',
          '--type',
          'public',
          '--redirect-uri',
          'https://a.example/cb',
          '--scopes',
          'openid',
        ],
        /unknown platform/,
        'clients',
      ],
      [
        'a malformed redirect URI',
        (p) => [
          'client',
          'create',
          '--platform',
          p,
          '--name',
          'X',
          '--type',
          'public',
          '--redirect-uri',
          'not a uri',
          '--scopes',
          'openid',
        ],
        /not an absolute URL/,
        'clients',
      ],
      [
        'a non-https redirect URI',
        (p) => [
          'client',
          'create',
          '--platform',
          p,
          '--name',
          'X',
          '--type',
          'public',
          '--redirect-uri',
          'http://app.example/cb',
          '--scopes',
          'openid',
        ],
        /must use https/,
        'clients',
      ],
      [
        'a localhost redirect URI (RFC 8252 §8.3)',
        (p) => [
          'client',
          'create',
          '--platform',
          p,
          '--name',
          'X',
          '--type',
          'public',
          '--redirect-uri',
          'http://localhost/cb',
          '--scopes',
          'openid',
        ],
        /uses localhost.*http:\/\/127\.0\.0\.1.*RFC 8252/,
        'clients',
      ],
      [
        'a localhost post-logout redirect URI',
        (p) => [
          'client',
          'create',
          '--platform',
          p,
          '--name',
          'X',
          '--type',
          'public',
          '--redirect-uri',
          'http://127.0.0.1/cb',
          '--post-logout-redirect-uri',
          'http://localhost:3000/',
          '--scopes',
          'openid',
        ],
        /uses localhost/,
        'clients',
      ],
      [
        'a redirect URI with a fragment',
        (p) => [
          'client',
          'create',
          '--platform',
          p,
          '--name',
          'X',
          '--type',
          'public',
          '--redirect-uri',
          'https://app.example/cb#x',
          '--scopes',
          'openid',
        ],
        /fragment/,
        'clients',
      ],
      [
        'an unknown scope',
        (p) => [
          'client',
          'create',
          '--platform',
          p,
          '--name',
          'X',
          '--type',
          'public',
          '--redirect-uri',
          'https://a.example/cb',
          '--scopes',
          'openid admin',
        ],
        /unknown scope "admin"/,
        'clients',
      ],
      [
        'an unknown client type',
        (p) => [
          'client',
          'create',
          '--platform',
          p,
          '--name',
          'X',
          '--type',
          'spa',
          '--redirect-uri',
          'https://a.example/cb',
          '--scopes',
          'openid',
        ],
        /client type/,
        'clients',
      ],
      [
        '--resource-server on a public client',
        (p) => [
          'client',
          'create',
          '--platform',
          p,
          '--name',
          'X',
          '--type',
          'public',
          '--redirect-uri',
          'https://a.example/cb',
          '--scopes',
          'openid',
          '--resource-server',
        ],
        /resource server must be a confidential client/,
        'clients',
      ],
      [
        '--resource-server with a value',
        (p) => [
          'client',
          'create',
          '--platform',
          p,
          '--name',
          'X',
          '--type',
          'confidential',
          '--redirect-uri',
          'https://a.example/cb',
          '--scopes',
          'openid',
          '--resource-server',
          'yes',
        ],
        /--resource-server takes no value/,
        'clients',
      ],
      [
        'a weak password',
        (p) => [
          'user',
          'create',
          '--platform',
          p,
          '--email',
          'w@example.com',
          '--password',
          'password',
          '--given-name',
          'A',
          '--family-name',
          'B',
          '--birthdate',
          '1990-01-01',
        ],
        /password: /,
        'users',
      ],
      [
        'an invalid birthdate',
        (p) => [
          'user',
          'create',
          '--platform',
          p,
          '--email',
          'w@example.com',
          '--password',
          'a long pass phrase',
          '--given-name',
          'A',
          '--family-name',
          'B',
          '--birthdate',
          '1990-02-30',
        ],
        /birthdate: /,
        'users',
      ],
      [
        'an invalid phone',
        (p) => [
          'user',
          'create',
          '--platform',
          p,
          '--email',
          'w@example.com',
          '--password',
          'a long pass phrase',
          '--given-name',
          'A',
          '--family-name',
          'B',
          '--birthdate',
          '1990-01-01',
          '--phone',
          '12',
        ],
        /phone_number: /,
        'users',
      ],
      [
        'a missing option',
        (p) => ['user', 'create', '--platform', p, '--email', 'w@example.com'],
        /--password is required/,
        'users',
      ],
      [
        'an unknown option',
        () => ['platform', 'create', '--name', 'A', '--colour', 'red'],
        /unknown option --colour/,
        'platforms',
      ],
      ['an unknown command', () => ['platform', 'delete'], /unknown command/, 'platforms'],
    ];
    it.each(cases)('%s', async (_label, argv, message, table) => {
      const p = await buildPlatform(t.services);
      const before = await count(table);
      await expect(run(...argv(p.id))).rejects.toThrow(message);
      expect(await count(table)).toBe(before);
    });

    it('a duplicate email, whatever its case', async () => {
      const p = await buildPlatform(t.services);
      const args = [
        '--password',
        'a long pass phrase',
        '--given-name',
        'A',
        '--family-name',
        'B',
        '--birthdate',
        '1990-01-01',
      ];
      await run('user', 'create', '--platform', p.id, '--email', 'dup@example.com', ...args);
      const before = await count('users');
      await expect(run('user', 'create', '--platform', p.id, '--email', 'DUP@example.com', ...args)).rejects.toThrow(
        /already exists/,
      );
      expect(await count('users')).toBe(before);
    });
  });
});

describe('admin CLI process', () => {
  const exec = promisify(execFile);
  const cli = (args: string[]) =>
    exec(process.execPath, [require.resolve('tsx/cli'), path.resolve(__dirname, '../../src/cli/main.ts'), ...args], {
      env: { ...process.env, ...TEST_ENV, DATABASE_URL: process.env.TEST_DATABASE_URL },
    });

  it('prints one JSON object on stdout', async () => {
    const { stdout, stderr } = await cli(['platform', 'create', '--name', 'From the shell']);
    expect(JSON.parse(stdout)).toMatchObject({ platform_guid: expect.any(String), name: 'From the shell' });
    expect(stdout.trim().split('\n')).toHaveLength(1);
    expect(stderr).toBe('');
  });

  it('refuses a localhost redirect URI with a line naming the rule, and exits non-zero', async () => {
    const p = await buildPlatform(t.services);
    const err = await cli([
      'client',
      'create',
      '--platform',
      p.id,
      '--name',
      'Native',
      '--type',
      'public',
      '--redirect-uri',
      'http://localhost/cb',
      '--scopes',
      'openid',
    ]).catch((e) => e);
    expect(err.code).toBe(1);
    expect(err.stdout).toBe('');
    expect(err.stderr).toMatch(
      /^error: redirect URI "http:\/\/localhost\/cb" uses localhost, which is not allowed: register the loopback IP literal http:\/\/127\.0\.0\.1\/… or http:\/\/\[::1\]\/… instead; any port is then accepted at sign-in \(RFC 8252 §7\.3, §8\.3\)\n$/,
    );
    expect(Number((await t.database.db('clients').where({ platform_id: p.id }).count('* as n').first())?.n)).toBe(0);
  });

  it('prints errors on stderr and exits non-zero', async () => {
    const err = await cli(['key', 'rotate', '--platform', 'nope']).catch((e) => e);
    expect(err.code).toBe(1);
    expect(err.stdout).toBe('');
    expect(err.stderr).toBe('error: unknown platform "nope"\n');
  });
});
