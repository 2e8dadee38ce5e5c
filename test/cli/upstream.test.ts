import { execFile } from 'node:child_process';
import path from 'node:path';
import { buildTestApp, TEST_ENV } from '../helpers';
import { runCommand, helpText } from '../../src/cli/commands';
import { buildPlatform, buildUser } from '../factories';
import * as identities from '../../src/repositories/user-identity.repository';
import { newId } from '../../src/crypto/random';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const run = (...argv: string[]) => runCommand(t.services, argv);
const SECRET = 'cli-upstream-secret-never-printed';

describe('admin CLI: upstream providers', () => {
  it('adds a Google preset, prints the callback URL to register, lists, shows (by id and slug), updates and removes it; audited as the CLI', async () => {
    const p = await buildPlatform(t.services);
    const added = await run(
      'upstream',
      'add',
      '--platform',
      p.id,
      '--kind',
      'google',
      '--client-id',
      'g.apps.example',
      '--client-secret',
      SECRET,
    );
    const callback = `http://issuer.test/platforms/${p.id}/upstream/callback`;
    expect(added).toMatchObject({
      kind: 'google',
      slug: 'google',
      display_name: 'Google',
      issuer: 'https://accounts.google.com',
      client_id: 'g.apps.example',
      has_client_secret: true,
      scopes: ['openid', 'email', 'profile'],
      trust_email: true,
      enabled: true,
      callback_url: callback,
      next_step: `Register ${callback} as the redirect URI (callback URL) of client "g.apps.example" at Google.`,
    });
    expect(JSON.stringify(added)).not.toContain(SECRET);
    expect((await t.services.federation.providers.forSignIn(p.id, 'google'))?.clientSecret).toBe(SECRET);

    const list = await run('upstream', 'list', '--platform', p.id);
    expect((list.items as Array<{ id: string }>).map((i) => i.id)).toEqual([added.id]);
    const shown = await run('upstream', 'show', '--platform', p.id, '--provider', 'google');
    const { next_step: _next, ...provider } = added;
    expect(shown).toEqual(provider);
    expect(await run('upstream', 'show', '--platform', p.id, '--provider', added.id as string)).toEqual(shown);

    const updated = await run(
      'upstream',
      'update',
      '--platform',
      p.id,
      '--provider',
      'google',
      '--name',
      'Google Workspace',
      '--no-trust-email',
      '--trust-mfa',
      '--claim',
      'email=mail',
      '--claim',
      'given_name=first',
      '--scopes',
      'openid email',
      '--disabled',
    );
    expect(updated).toMatchObject({
      display_name: 'Google Workspace',
      trust_email: false,
      trust_mfa: true,
      claim_mapping: { email: 'mail', given_name: 'first' },
      scopes: ['openid', 'email'],
      enabled: false,
      has_client_secret: true,
    });
    const cleared = await run(
      'upstream',
      'update',
      '--platform',
      p.id,
      '--provider',
      'google',
      '--no-claims',
      '--no-client-secret',
      '--enabled',
    );
    expect(cleared).toMatchObject({ claim_mapping: {}, has_client_secret: false, enabled: true });

    const [event] = (await t.services.audit.list({ platformId: p.id, kind: 'upstream_provider.updated' }, 1)).events;
    expect(event).toMatchObject({
      actorType: 'cli',
      details: { client_secret_set: false, has_client_secret: { from: true, to: false } },
    });
    const created = (await t.services.audit.list({ platformId: p.id, kind: 'upstream_provider.created' }, 1)).events[0];
    expect(created).toMatchObject({ actorType: 'cli', details: { slug: 'google', client_secret_set: true } });
    expect(JSON.stringify(created)).not.toContain(SECRET);

    expect(await run('upstream', 'remove', '--platform', p.id, '--provider', 'google')).toEqual({
      removed: true,
      platform_guid: p.id,
      id: added.id,
      slug: 'google',
      identities_unlinked: 0,
    });
    expect((await run('upstream', 'list', '--platform', p.id)).items).toEqual([]);
  });

  it('adds an OIDC provider, Microsoft by tenant and GitHub Enterprise with their own flags', async () => {
    const p = await buildPlatform(t.services);
    expect(
      await run(
        'upstream',
        'add',
        '--platform',
        p.id,
        '--kind',
        'oidc',
        '--name',
        'Acme SSO',
        '--issuer',
        'https://sso.acme.example',
        '--client-id',
        'latchkey',
        '--store-tokens',
      ),
    ).toMatchObject({
      slug: 'acme-sso',
      issuer: 'https://sso.acme.example',
      has_client_secret: false,
      store_tokens: true,
      trust_email: false,
    });
    expect(
      await run(
        'upstream',
        'add',
        '--platform',
        p.id,
        '--kind',
        'microsoft',
        '--tenant',
        'contoso.onmicrosoft.com',
        '--client-id',
        'ms',
      ),
    ).toMatchObject({ slug: 'microsoft', issuer: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0' });
    expect(
      await run(
        'upstream',
        'add',
        '--platform',
        p.id,
        '--kind',
        'github',
        '--slug',
        'ghe',
        '--issuer',
        'https://ghe.acme.example',
        '--api-base-url',
        'https://ghe.acme.example/api/v3',
        '--client-id',
        'Iv1',
        '--client-secret',
        's',
        '--disabled',
      ),
    ).toMatchObject({ slug: 'ghe', api_base_url: 'https://ghe.acme.example/api/v3', enabled: false });
  });

  it("lists a user's linked identities (by --email too) and unlinks one", async () => {
    const p = await buildPlatform(t.services);
    const provider = await run(
      'upstream',
      'add',
      '--platform',
      p.id,
      '--kind',
      'google',
      '--client-id',
      'g',
      '--client-secret',
      's',
    );
    const u = await buildUser(t.services, p.id);
    const identity = (await identities.insertUnlessLinked(
      t.database.db,
      {
        id: newId(),
        platformId: p.id,
        userId: u.id,
        providerId: provider.id as string,
        subject: '1234',
        email: 'x@gmail.example',
        sealedTokens: null,
      },
      new Date(),
    ))!;
    const listed = await run('upstream', 'identities', '--platform', p.id, '--email', u.email);
    expect(listed).toEqual({
      sub: u.id,
      items: [
        expect.objectContaining({
          id: identity.id,
          provider_slug: 'google',
          provider_name: 'Google',
          subject: '1234',
          email: 'x@gmail.example',
        }),
      ],
    });
    expect(await run('upstream', 'unlink', '--platform', p.id, '--sub', u.id, '--identity', identity.id)).toEqual({
      sub: u.id,
      done: 'identity_unlinked',
      identity_id: identity.id,
      provider: 'google',
    });
    expect((await run('upstream', 'identities', '--platform', p.id, '--sub', u.id)).items).toEqual([]);
    expect((await t.services.audit.list({ platformId: p.id, kind: 'identity.unlinked' }, 1)).events[0]).toMatchObject({
      actorType: 'cli',
      subject: u.id,
      details: { provider: 'google' },
    });
  });

  describe('refuses bad input with one clear line and stores nothing', () => {
    const cases: Array<[string, (p: string) => string[], RegExp]> = [
      ['no --kind', (p) => ['upstream', 'add', '--platform', p, '--client-id', 'x'], /--kind is required/],
      [
        'an unknown kind',
        (p) => ['upstream', 'add', '--platform', p, '--kind', 'facebook', '--client-id', 'x'],
        /kind: must be one of oidc, google, microsoft, github/,
      ],
      [
        'oidc without --issuer',
        (p) => ['upstream', 'add', '--platform', p, '--kind', 'oidc', '--name', 'X', '--client-id', 'x'],
        /issuer: required for an OpenID Connect provider/,
      ],
      [
        'an http issuer',
        (p) => [
          'upstream',
          'add',
          '--platform',
          p,
          '--kind',
          'oidc',
          '--name',
          'X',
          '--issuer',
          'http://sso.example',
          '--client-id',
          'x',
        ],
        /issuer: must use https/,
      ],
      [
        'a bad --claim',
        (p) => ['upstream', 'add', '--platform', p, '--kind', 'google', '--client-id', 'x', '--claim', 'email'],
        /--claim email: write LOCAL=UPSTREAM/,
      ],
      [
        'an unknown claim',
        (p) => ['upstream', 'add', '--platform', p, '--kind', 'google', '--client-id', 'x', '--claim', 'groups=roles'],
        /claim_mapping: unknown claim "groups"/,
      ],
      [
        'two secrets',
        (p) => [
          'upstream',
          'add',
          '--platform',
          p,
          '--kind',
          'google',
          '--client-id',
          'x',
          '--client-secret',
          'a',
          '--client-secret-stdin',
        ],
        /give one of --client-secret, --client-secret-stdin/,
      ],
      [
        'GitHub without a secret',
        (p) => ['upstream', 'add', '--platform', p, '--kind', 'github', '--client-id', 'x'],
        /client_secret: required for GitHub/,
      ],
      [
        '--tenant on google',
        (p) => ['upstream', 'add', '--platform', p, '--kind', 'google', '--client-id', 'x', '--tenant', 'contoso'],
        /tenant: only for a Microsoft provider/,
      ],
      [
        'an unknown option',
        (p) => ['upstream', 'add', '--platform', p, '--kind', 'google', '--client-id', 'x', '--colour', 'red'],
        /unknown option --colour/,
      ],
      [
        'an unknown platform',
        () => [
          'upstream',
          'add',
          '--platform',
          '00000000-0000-4000-8000-000000000000',
          '--kind',
          'google',
          '--client-id',
          'x',
        ],
        /unknown platform/,
      ],
    ];
    it.each(cases)('%s', async (_label, argv, message) => {
      const p = await buildPlatform(t.services);
      await expect(run(...argv(p.id))).rejects.toThrow(message);
      expect(await t.services.federation.providers.list(p.id)).toEqual([]);
    });

    it('a taken slug, an unknown provider, --enabled with --disabled, an empty update', async () => {
      const p = await buildPlatform(t.services);
      await run('upstream', 'add', '--platform', p.id, '--kind', 'google', '--client-id', 'x');
      await expect(run('upstream', 'add', '--platform', p.id, '--kind', 'google', '--client-id', 'y')).rejects.toThrow(
        'slug: a provider "google" already exists on this platform',
      );
      await expect(run('upstream', 'show', '--platform', p.id, '--provider', 'github')).rejects.toThrow(
        'unknown upstream provider "github"',
      );
      await expect(
        run('upstream', 'update', '--platform', p.id, '--provider', 'google', '--enabled', '--disabled'),
      ).rejects.toThrow('give --enabled or --disabled, not both');
      await expect(run('upstream', 'update', '--platform', p.id, '--provider', 'google')).rejects.toThrow(
        'give at least one field to change',
      );
      await expect(
        run('upstream', 'update', '--platform', p.id, '--provider', 'google', '--kind', 'github'),
      ).rejects.toThrow('unknown option --kind');
      expect((await t.services.federation.providers.list(p.id)).map((x) => x.clientId)).toEqual(['x']);
    });
  });

  it('has help for the group and each verb', () => {
    expect(helpText(['upstream'])).toContain(
      'admin upstream add --platform G --kind oidc|google|microsoft|github --client-id ID',
    );
    const add = helpText(['upstream', 'add']);
    expect(add).toMatch(/^Usage: admin upstream add /);
    expect(add).toContain('--client-secret-stdin: reads the secret from standard input');
    expect(add).toContain('Register the printed callback_url as the redirect URI');
    expect(helpText([])).toMatch(/^ {2}upstream +a platform's upstream identity providers/m);
  });
});

describe('admin CLI process: upstream', () => {
  /** The CLI as a process (tsx over src/, as test/cli/admin.test.ts), with `input` on its standard input. */
  const cli = (args: string[], input?: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [require.resolve('tsx/cli'), path.resolve(__dirname, '../../src/cli/main.ts'), ...args],
        {
          env: { ...process.env, ...TEST_ENV, DATABASE_URL: process.env.TEST_DATABASE_URL },
        },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin!.end(input ?? '');
    });

  it('reads the client secret from standard input, prints one JSON object with the callback URL and never the secret', async () => {
    const p = await buildPlatform(t.services);
    const { code, stdout, stderr } = await cli(
      [
        'upstream',
        'add',
        '--platform',
        p.id,
        '--kind',
        'oidc',
        '--name',
        'Acme SSO',
        '--issuer',
        'https://sso.acme.example',
        '--client-id',
        'latchkey',
        '--client-secret-stdin',
        '--scopes',
        'openid email',
        '--claim',
        'email=mail',
        '--trust-email',
      ],
      `${SECRET}\n`,
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.trim().split('\n')).toHaveLength(1);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({
      slug: 'acme-sso',
      has_client_secret: true,
      trust_email: true,
      claim_mapping: { email: 'mail' },
      callback_url: `http://issuer.test/platforms/${p.id}/upstream/callback`,
    });
    expect(stdout).not.toContain(SECRET);
    expect((await t.services.federation.providers.forSignIn(p.id, 'acme-sso'))?.clientSecret).toBe(SECRET); // without the line end
  });

  it('an empty standard input is refused: error on stderr, exit 1, nothing stored', async () => {
    const p = await buildPlatform(t.services);
    const res = await cli(
      ['upstream', 'add', '--platform', p.id, '--kind', 'google', '--client-id', 'g', '--client-secret-stdin'],
      '\n',
    );
    expect(res).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: --client-secret-stdin: standard input gave no secret\n',
    });
    expect(await t.services.federation.providers.list(p.id)).toEqual([]);
  });
});
