import { buildTestApp } from '../helpers';
import { runCommand, helpText } from '../../src/cli/commands';
import { buildPlatform, buildStandardPlatform } from '../factories';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const run = (...argv: string[]) => runCommand(t.services, argv);
const failure = (argv: string[]) =>
  run(...argv).then(
    () => 'no error',
    (e: { description?: string }) => e.description,
  );

describe('admin CLI: resources', () => {
  it('creates with scope descriptions, lists, shows (by id and URI), updates and deletes a resource; audited as the CLI', async () => {
    const p = await buildStandardPlatform(t.services);
    const created = await run(
      'resource',
      'create',
      '--platform',
      p.id,
      '--uri',
      'https://mcp.example.com/',
      '--name',
      'Tools',
      '--scopes',
      'tools:read tools:call',
      '--scope-description',
      'tools:read=List the tools',
      '--scope-description=tools:call=Run a tool for you',
      '--default-scopes',
      'tools:read',
      '--access-token-ttl',
      '300',
    );
    expect(created).toMatchObject({
      platform_guid: p.id,
      uri: 'https://mcp.example.com/',
      name: 'Tools',
      scopes: [
        { name: 'tools:read', description: 'List the tools' },
        { name: 'tools:call', description: 'Run a tool for you' },
      ],
      default_scopes: ['tools:read'],
      access_token_ttl_seconds: 300,
    });
    expect(await run('resource', 'list', '--platform', p.id)).toEqual({ items: [created] });
    expect(await run('resource', 'show', '--platform', p.id, '--uri', 'https://mcp.example.com/')).toEqual(created);
    expect(await run('resource', 'show', '--platform', p.id, '--resource', created.id as string)).toEqual(created);

    // --scopes replaces the list; a kept scope keeps its description.
    const updated = await run(
      'resource',
      'update',
      '--platform',
      p.id,
      '--uri',
      'https://mcp.example.com/',
      '--new-uri',
      'https://mcp.example.com/v2',
      '--name',
      'Tools v2',
      '--scopes',
      'tools:read tools:admin',
      '--scope-description',
      'tools:admin=Manage the tools',
      '--default-scopes',
      '',
      '--no-access-token-ttl',
    );
    expect(updated).toMatchObject({
      uri: 'https://mcp.example.com/v2',
      name: 'Tools v2',
      scopes: [
        { name: 'tools:read', description: 'List the tools' },
        { name: 'tools:admin', description: 'Manage the tools' },
      ],
      default_scopes: [],
      access_token_ttl_seconds: null,
    });
    const described = await run(
      'resource',
      'update',
      '--platform',
      p.id,
      '--resource',
      created.id as string,
      '--scope-description',
      'tools:read=See the tools',
    );
    expect(described.scopes).toEqual([
      { name: 'tools:read', description: 'See the tools' },
      { name: 'tools:admin', description: 'Manage the tools' },
    ]);
    const [event] = (await t.services.audit.list({ platformId: p.id, kind: 'resource.updated' }, 1)).events;
    expect(event).toMatchObject({ actorType: 'cli', details: { scope_descriptions: ['tools:read'] } });

    expect(await run('resource', 'delete', '--platform', p.id, '--uri', 'https://mcp.example.com/v2')).toEqual({
      deleted: true,
      platform_guid: p.id,
      id: created.id,
      uri: 'https://mcp.example.com/v2',
    });
    expect((await run('resource', 'list', '--platform', p.id)).items).toEqual([]);
    expect((await t.services.audit.list({ platformId: p.id, kind: 'resource.deleted' }, 1)).events[0]).toMatchObject({
      actorType: 'cli',
    });
  });

  it('says what is wrong: the rules, the flags, a seed platform', async () => {
    const p = await buildStandardPlatform(t.services);
    const create = (...more: string[]) => ['resource', 'create', '--platform', p.id, '--name', 'API', ...more];
    expect(await failure(create('--uri', 'https://api.example.com/#frag'))).toBe('uri: must not contain a fragment');
    expect(await failure(create())).toBe('--uri is required');
    expect(await failure(create('--uri', 'urn:api', '--scopes', 'a', '--scope-description', 'b=Bee'))).toBe(
      '--scope-description b: the resource has no scope "b" (name it in --scopes)',
    );
    expect(await failure(create('--uri', 'urn:api', '--scopes', 'a', '--scope-description', 'a'))).toMatch(
      /^--scope-description a: write NAME=TEXT/,
    );
    expect(await failure(create('--uri', 'urn:api', '--access-token-ttl', 'an hour'))).toBe(
      '--access-token-ttl: a whole number of seconds',
    );
    expect(await failure(create('--uri', 'urn:api', '--scopes', 'a', '--default-scopes', 'b'))).toBe(
      'default_scopes: "b" is not one of the resource\'s scopes',
    );
    expect(await failure(['resource', 'show', '--platform', p.id])).toBe(
      'give --resource ID or --uri URI (one of them)',
    );
    expect(await failure(['resource', 'show', '--platform', p.id, '--uri', 'urn:none'])).toBe(
      'unknown resource "urn:none"',
    );
    const seed = await buildPlatform(t.services);
    expect(await failure(['resource', 'create', '--platform', seed.id, '--uri', 'urn:api', '--name', 'API'])).toMatch(
      /^resources are for standard platforms only/,
    );
  });

  it('has help for the group and each verb', () => {
    expect(helpText(['resource'])).toContain('admin resource create --platform G --uri URI --name N');
    expect(helpText(['resource', 'update'])).toContain('--no-access-token-ttl');
    expect(helpText([])).toMatch(/resource\s+a standard platform's resources .*: create, list, show, update, delete/);
  });
});
