import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTestApp } from '../helpers';
import { runCommand } from '../../src/cli/commands';
import { buildClient, buildPlatform } from '../factories';
import { LOGO_MAX_BYTES } from '../../src/domain/branding';

let t: Awaited<ReturnType<typeof buildTestApp>>;
let dir: string;
beforeAll(async () => {
  t = await buildTestApp();
  dir = await mkdtemp(path.join(tmpdir(), 'latchkey-logo-'));
});
afterAll(() => t.close());

const run = (...argv: string[]) => runCommand(t.services, argv);
const file = async (name: string, bytes: Buffer | string) => {
  const p = path.join(dir, name);
  await writeFile(p, bytes);
  return p;
};
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('rest')]);

describe('admin CLI: branding', () => {
  it('platform update sets and clears --logo-url, --accent-color, --support-email; audited', async () => {
    const p = await buildPlatform(t.services);
    const out = await run(
      'platform',
      'update',
      '--platform',
      p.id,
      '--logo-url',
      'https://cdn.example/l.png',
      '--accent-color',
      '#0F766E',
      '--support-email',
      'help@acme.example',
    );
    expect(out).toMatchObject({
      logo_url: 'https://cdn.example/l.png',
      accent_color: '#0f766e',
      support_email: 'help@acme.example',
    });
    expect((await t.services.platforms.findPlatform(p.id))!.branding.accentColor).toBe('#0f766e');
    const event = (await t.services.audit.list({ platformId: p.id, kind: 'platform.updated' }, 1)).events[0];
    expect(event).toMatchObject({ actorType: 'cli', details: { accent_color: { from: null, to: '#0f766e' } } });
    const cleared = await run(
      'platform',
      'update',
      '--platform',
      p.id,
      '--logo-url',
      '',
      '--accent-color',
      '',
      '--support-email',
      '',
    );
    expect(cleared).toMatchObject({ logo_url: null, accent_color: null, support_email: null });
  });

  it('refuses a low-contrast accent colour with its ratio, and an http logo URL', async () => {
    const p = await buildPlatform(t.services);
    await expect(run('platform', 'update', '--platform', p.id, '--accent-color', '#aaaaaa')).rejects.toThrow(
      /accent_color: has a contrast of 2\.32:1 against white/,
    );
    await expect(
      run('platform', 'update', '--platform', p.id, '--logo-url', 'http://cdn.example/l.png'),
    ).rejects.toThrow(/logo_url: .* must be an https URL/);
  });

  it('--logo-file uploads a logo (type by content), --remove-logo removes it; a bad file changes nothing', async () => {
    const p = await buildPlatform(t.services);
    const out = await run(
      'platform',
      'update',
      '--platform',
      p.id,
      '--logo-file',
      await file('logo.png', PNG),
      '--name',
      'Acme',
    );
    expect(out).toMatchObject({
      name: 'Acme',
      logo_version: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
      uploaded_logo_path: expect.stringContaining(`/platforms/${p.id}/logo?v=`),
    });
    const svg = await run(
      'platform',
      'update',
      '--platform',
      p.id,
      '--logo-file',
      await file('logo.svg', '<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>'),
    );
    expect(svg.logo_version).not.toBe(out.logo_version);

    await expect(
      run(
        'platform',
        'update',
        '--platform',
        p.id,
        '--name',
        'Other',
        '--logo-file',
        await file('logo.txt', 'not an image'),
      ),
    ).rejects.toThrow(/the logo is none of image\/png/);
    await expect(
      run(
        'platform',
        'update',
        '--platform',
        p.id,
        '--logo-file',
        await file('big.png', Buffer.concat([PNG, Buffer.alloc(LOGO_MAX_BYTES)])),
      ),
    ).rejects.toThrow(/at most 262144/);
    await expect(
      run('platform', 'update', '--platform', p.id, '--logo-file', path.join(dir, 'missing.png')),
    ).rejects.toThrow(/--logo-file: cannot read .*ENOENT/);
    await expect(
      run('platform', 'update', '--platform', p.id, '--logo-file', path.join(dir, 'logo.png'), '--remove-logo'),
    ).rejects.toThrow(/not both/);
    expect(await run('platform', 'show', '--platform', p.id)).toMatchObject({
      name: 'Acme',
      logo_version: svg.logo_version,
    });

    const removed = await run('platform', 'update', '--platform', p.id, '--remove-logo');
    expect(removed).toMatchObject({ logo_version: null, uploaded_logo_path: null });
  });

  it('client create/update take --logo-uri, --client-uri, --policy-uri, --tos-uri; "" clears one; http only on loopback', async () => {
    const p = await buildPlatform(t.services);
    const created = await run(
      'client',
      'create',
      '--platform',
      p.id,
      '--name',
      'Web',
      '--type',
      'public',
      '--redirect-uri',
      'https://app.example/cb',
      '--scopes',
      'openid',
      '--logo-uri',
      'https://app.example/logo.png',
      '--client-uri',
      'https://app.example',
      '--policy-uri',
      'https://app.example/privacy',
      '--tos-uri',
      'http://127.0.0.1:3000/terms',
    );
    expect(created).toMatchObject({
      logo_uri: 'https://app.example/logo.png',
      client_uri: 'https://app.example',
      policy_uri: 'https://app.example/privacy',
      tos_uri: 'http://127.0.0.1:3000/terms',
    });
    const updated = await run(
      'client',
      'update',
      '--platform',
      p.id,
      '--client',
      created.client_id as string,
      '--logo-uri',
      '',
      '--tos-uri',
      'https://app.example/terms',
    );
    expect(updated).toMatchObject({
      logo_uri: null,
      client_uri: 'https://app.example',
      tos_uri: 'https://app.example/terms',
    });
    const c = await buildClient(t.services, p.id);
    await expect(
      run('client', 'update', '--platform', p.id, '--client', c.id, '--client-uri', 'javascript:alert(1)'),
    ).rejects.toThrow(/client_uri: .*must be an https URL/);
  });
});
