import {
  clientIdUrlProblem,
  clientMetadataDocumentPolicyProblem,
  hostAllowed,
  isClientIdUrl,
  metadataDocumentClientOf,
  parseClientMetadataDocument,
} from '../../src/domain/client-metadata-document';

const URL_ID = 'https://app.example.com/oauth/client.json';
const VALID = { client_id: URL_ID, client_name: 'Example Agent', redirect_uris: ['https://app.example.com/callback'] };

const reasonOf = (doc: unknown, url = URL_ID): string => {
  const parsed = parseClientMetadataDocument(url, doc);
  if (parsed.ok) throw new Error('expected a refusal');
  return parsed.reason;
};

describe('client identifier URLs', () => {
  it.each([
    'https://app.example.com/client',
    'https://app.example.com/oauth/client.json',
    'https://app.example.com:8443/client',
    'https://app.example.com/client?v=1', // a query is discouraged, not forbidden
    'https://127.0.0.1:4000/client', // the outbound guard decides about addresses
    'https://app.example.com/a%2Fb',
  ])('accepts %s', (id) => {
    expect(clientIdUrlProblem(id)).toBeUndefined();
    expect(isClientIdUrl(id)).toBe(true);
  });

  it.each([
    ['http://app.example.com/client', 'not an https URL'],
    ['https://app.example.com', 'must have a path'],
    ['https://app.example.com/', 'must have a path'],
    ['https://app.example.com/client#frag', 'fragment'],
    ['https://user:pw@app.example.com/client', 'user name or password'],
    ['https://user@app.example.com/client', 'user name or password'],
    ['https://@app.example.com/client', 'user name or password'],
    ['https://app.example.com/a/../client', '".."'],
    ['https://app.example.com/./client', '"."'],
    ['https://app.example.com/a/%2e%2E/client', '".."'],
    ['https://app.example.com/a/%2e/client', '"."'],
    ['https://App.Example.com/client', 'normal form (https://app.example.com/client)'],
    ['https://app.example.com:443/client', 'normal form'],
    ['HTTPS://app.example.com/client', 'not an https URL'],
    ['https://app.example.com/cli ent', 'characters'],
    ['https://evil.example\\@app.example.com/client', 'characters'],
    ['https://bücher.example/client', 'characters'],
    ['https://0x7f.1/client', 'normal form'],
    ['https://app.example.com/' + 'a'.repeat(2000), 'longer than 2000'],
    ['javascript:alert(1)//x', 'not an https URL'],
    ['', 'characters'],
    ['00000000-0000-4000-8000-000000000000', 'not an https URL'],
  ])('refuses %s', (id, why) => {
    expect(clientIdUrlProblem(id)).toContain(why);
    expect(isClientIdUrl(id)).toBe(false);
  });
});

describe('host patterns', () => {
  it('on allows any host, off (or nothing) none', () => {
    expect(hostAllowed('on', 'anything.example')).toBe(true);
    expect(hostAllowed(' ON ', 'anything.example')).toBe(true);
    expect(hostAllowed('off', 'anything.example')).toBe(false);
    expect(hostAllowed('', 'anything.example')).toBe(false);
  });

  it('matches exact hosts and *.domain (subdomains at any depth, never the domain itself), without case', () => {
    const policy = '*.example.com app.example.org';
    expect(hostAllowed(policy, 'a.example.com')).toBe(true);
    expect(hostAllowed(policy, 'a.b.example.com')).toBe(true);
    expect(hostAllowed(policy, 'A.Example.COM')).toBe(true);
    expect(hostAllowed(policy, 'example.com')).toBe(false);
    expect(hostAllowed(policy, 'evilexample.com')).toBe(false);
    expect(hostAllowed(policy, 'example.com.evil.net')).toBe(false);
    expect(hostAllowed(policy, 'app.example.org')).toBe(true);
    expect(hostAllowed(policy, 'app.example.org.')).toBe(true); // a trailing dot names the same host
    expect(hostAllowed(policy, 'x.app.example.org')).toBe(false);
    expect(hostAllowed(policy, 'example.org')).toBe(false);
    expect(hostAllowed('*.example.com example.com', 'example.com')).toBe(true);
    expect(hostAllowed('APP.example.org', 'app.example.org')).toBe(true);
  });

  it('checks a policy value before it is stored', () => {
    for (const ok of ['on', 'off', 'app.example.org', '*.example.com app.example.org', '  *.a.b  c.d '])
      expect(clientMetadataDocumentPolicyProblem(ok)).toBeUndefined();
    for (const bad of [
      '',
      '   ',
      '*',
      '*.com',
      'a.*.example.com',
      'https://example.com',
      'example.com:443',
      '-bad.example.com',
      'under_score.example',
      'on example.com',
    ]) {
      expect(clientMetadataDocumentPolicyProblem(bad)).toBeDefined();
    }
    expect(
      clientMetadataDocumentPolicyProblem(Array.from({ length: 51 }, (_, i) => `h${i}.example.com`).join(' ')),
    ).toContain('more than 50');
  });
});

describe('parsing a client metadata document', () => {
  it('makes a public client: exact redirect URIs, the name, https display URIs, OpenID scopes by default', () => {
    const parsed = parseClientMetadataDocument(URL_ID, {
      ...VALID,
      redirect_uris: [
        'https://app.example.com/callback',
        'http://127.0.0.1/cb',
        'http://[::1]:8080/cb',
        'https://app.example.com/callback',
      ],
      post_logout_redirect_uris: ['https://app.example.com/bye'],
      client_uri: 'https://app.example.com/',
      logo_uri: 'https://app.example.com/logo.png',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      software_id: 'ignored',
      jwks_uri: 'https://app.example.com/jwks.json',
    });
    expect(parsed).toEqual({
      ok: true,
      client: {
        id: URL_ID,
        name: 'Example Agent',
        type: 'public',
        redirectUris: ['https://app.example.com/callback', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb'],
        postLogoutRedirectUris: ['https://app.example.com/bye'],
        allowedScopes: ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'],
        grantTypes: ['authorization_code', 'refresh_token'],
        clientUri: 'https://app.example.com/',
        logoUri: 'https://app.example.com/logo.png',
        policyUri: null,
        tosUri: null,
      },
    });
  });

  it('names the client by its host without client_name; offline_access only with the refresh_token grant', () => {
    const parsed = parseClientMetadataDocument(URL_ID, { client_id: URL_ID, redirect_uris: ['https://a.example/cb'] });
    expect(parsed.ok && parsed.client.name).toBe('app.example.com');
    expect(parsed.ok && parsed.client.allowedScopes).toEqual(['openid', 'profile', 'email', 'phone', 'address']);
    expect(parsed.ok && parsed.client.grantTypes).toEqual(['authorization_code']);
    const scoped = parseClientMetadataDocument(URL_ID, { ...VALID, scope: 'openid mcp:tools offline_access openid' });
    expect(scoped.ok && scoped.client.allowedScopes).toEqual(['openid', 'mcp:tools']);
    const refreshing = parseClientMetadataDocument(URL_ID, {
      ...VALID,
      scope: 'mcp:tools offline_access',
      grant_types: ['refresh_token', 'authorization_code'],
    });
    expect(refreshing.ok && refreshing.client.allowedScopes).toEqual(['mcp:tools', 'offline_access']);
  });

  it.each([
    ['not an object', [], 'not a JSON object'],
    ['null', null, 'not a JSON object'],
    ['a string', 'https://app.example.com/oauth/client.json', 'not a JSON object'],
    ['no client_id', { redirect_uris: VALID.redirect_uris }, 'has no client_id'],
    ['another client_id', { ...VALID, client_id: 'https://other.example.com/oauth/client.json' }, 'is not the URL'],
    ['a client_id with a trailing slash', { ...VALID, client_id: URL_ID + '/' }, 'is not the URL'],
    ['a client_id differing in case', { ...VALID, client_id: URL_ID.toUpperCase() }, 'is not the URL'],
    ['a client_id that is not a string', { ...VALID, client_id: 42 }, 'is not the URL'],
    ['a client secret', { ...VALID, client_secret: 's3cret' }, 'client_secret must not appear'],
    ['a client secret expiry', { ...VALID, client_secret_expires_at: 0 }, 'client_secret_expires_at must not appear'],
    ['client_secret_basic', { ...VALID, token_endpoint_auth_method: 'client_secret_basic' }, 'only "none"'],
    ['client_secret_post', { ...VALID, token_endpoint_auth_method: 'client_secret_post' }, 'only "none"'],
    ['client_secret_jwt', { ...VALID, token_endpoint_auth_method: 'client_secret_jwt' }, 'only "none"'],
    [
      'private_key_jwt (not supported yet)',
      { ...VALID, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://app.example.com/jwks' },
      'only "none"',
    ],
    ['an auth method that is not a string', { ...VALID, token_endpoint_auth_method: ['none'] }, 'must be a string'],
    [
      'private key material',
      { ...VALID, jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'secret' }] } },
      'private key material',
    ],
    ['a symmetric key', { ...VALID, jwks: { keys: [{ kty: 'oct', k: 'secret' }] } }, 'private key material'],
    ['malformed jwks', { ...VALID, jwks: 'keys' }, 'keys array'],
    ['implicit grant', { ...VALID, grant_types: ['authorization_code', 'implicit'] }, '"implicit" is not supported'],
    ['client_credentials', { ...VALID, grant_types: ['client_credentials'] }, '"client_credentials" is not supported'],
    ['refresh without code', { ...VALID, grant_types: ['refresh_token'] }, 'must include authorization_code'],
    ['grant_types as a string', { ...VALID, grant_types: 'authorization_code' }, 'array of strings'],
    ['token response type', { ...VALID, response_types: ['code', 'token'] }, '"token" is not supported'],
    ['id_token response type', { ...VALID, response_types: ['code id_token'] }, 'is not supported'],
    ['no redirect_uris', { client_id: URL_ID }, 'at least one redirect URI'],
    ['empty redirect_uris', { ...VALID, redirect_uris: [] }, 'at least one redirect URI'],
    ['redirect_uris as a string', { ...VALID, redirect_uris: 'https://app.example.com/cb' }, 'array of strings'],
    [
      'a redirect URI that is not a string',
      { ...VALID, redirect_uris: [{ uri: 'https://app.example.com/cb' }] },
      'array of strings',
    ],
    ['an http redirect URI', { ...VALID, redirect_uris: ['http://app.example.com/cb'] }, 'must use https'],
    ['a localhost redirect URI', { ...VALID, redirect_uris: ['http://localhost:3000/cb'] }, 'uses localhost'],
    ['a redirect URI with a fragment', { ...VALID, redirect_uris: ['https://app.example.com/cb#x'] }, 'fragment'],
    ['a javascript: redirect URI', { ...VALID, redirect_uris: ['javascript:alert(1)'] }, 'must use https'],
    ['a relative redirect URI', { ...VALID, redirect_uris: ['/cb'] }, 'not an absolute URL'],
    [
      'too many redirect URIs',
      { ...VALID, redirect_uris: Array.from({ length: 21 }, (_, i) => `https://app.example.com/cb${i}`) },
      'more than 20',
    ],
    [
      'an oversized redirect URI',
      { ...VALID, redirect_uris: ['https://app.example.com/' + 'a'.repeat(2000)] },
      'longer than 2000',
    ],
    [
      'a bad post-logout URI',
      { ...VALID, post_logout_redirect_uris: ['http://app.example.com/bye'] },
      'post_logout_redirect_uris: redirect URI',
    ],
    ['an empty name', { ...VALID, client_name: '   ' }, 'must not be empty'],
    ['a long name', { ...VALID, client_name: 'A'.repeat(101) }, 'longer than 100'],
    ['a name that is not a string', { ...VALID, client_name: { en: 'Agent' } }, 'client_name must be a string'],
    ['a name with a newline', { ...VALID, client_name: 'Agent\nOfficial' }, 'control or direction'],
    ['a name with a direction override', { ...VALID, client_name: 'Agent\u202egnp.exe' }, 'control or direction'],
    ['an http logo', { ...VALID, logo_uri: 'http://app.example.com/logo.png' }, 'logo_uri must be an https URL'],
    ['a data: logo', { ...VALID, logo_uri: 'data:image/png;base64,AAAA' }, 'logo_uri must be an https URL'],
    ['a javascript: client_uri', { ...VALID, client_uri: 'javascript:alert(1)' }, 'client_uri must be an https URL'],
    [
      'a client_uri with credentials',
      { ...VALID, client_uri: 'https://u:p@app.example.com/' },
      'client_uri must be an https URL',
    ],
    ['a tos_uri that is not a string', { ...VALID, tos_uri: 1 }, 'tos_uri must be a string'],
    ['a scope that is not a string', { ...VALID, scope: ['openid'] }, 'scope must be a string'],
    ['a scope with a quote', { ...VALID, scope: 'openid "x"' }, 'invalid scope token'],
    ['too many scopes', { ...VALID, scope: Array.from({ length: 51 }, (_, i) => `s${i}`).join(' ') }, 'more than 50'],
  ])('refuses %s', (_what, doc, why) => {
    expect(reasonOf(doc)).toContain(why);
  });

  it('quotes at most 80 characters of a value in its reason', () => {
    const reason = reasonOf({ ...VALID, client_id: 'https://x.example/' + 'y'.repeat(500) });
    expect(reason.length).toBeLessThan(160);
  });

  it('gives the platform a public client with no secret and no logout URIs', () => {
    const parsed = parseClientMetadataDocument(URL_ID, VALID);
    if (!parsed.ok) throw new Error(parsed.reason);
    const at = new Date('2026-11-27T12:00:00Z');
    expect(metadataDocumentClientOf('platform-1', parsed.client, at)).toMatchObject({
      id: URL_ID,
      platformId: 'platform-1',
      type: 'public',
      sealedSecret: null,
      previousSealedSecret: null,
      isResourceServer: false,
      idTokenSignedResponseAlg: null,
      backchannelLogoutUri: null,
      frontchannelLogoutUri: null,
      createdAt: at,
    });
  });
});
