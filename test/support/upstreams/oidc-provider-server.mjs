// An upstream OpenID Connect provider for the tests: the `oidc-provider` package (ESM only, so it
// runs as its own node process, started by ./oidc-provider-process.ts, never inside jest).
//
// Input: OIDC_UPSTREAM_CONFIG (JSON) =
//   { clients: [{ client_id, client_secret?, redirect_uris, token_endpoint_auth_method? }],
//     accounts: { "<account id>": { email, email_verified, given_name, family_name, ... } } }
// Output: one line `listening <issuer>` on stdout once it accepts connections; on stderr, a
// `stage <name> <ms>` line after each start-up step, so a start that stalls says where.
//
// Sign-in is the package's development interactions: a form taking any account id (the password
// is not checked), then a consent page ("Continue", or "[ Cancel ]": error=access_denied).
// POST /__test/accounts {"id": "...", "claims": {...}} adds an account while it runs, so each test
// has its own upstream people without restarting the process.
import http from 'node:http';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

const stage = (name) => process.stderr.write(`stage ${name} ${Math.round(performance.now())}\n`);
stage('imported');
const config = JSON.parse(process.env.OIDC_UPSTREAM_CONFIG ?? '{}');
const accounts = new Map(Object.entries(config.accounts ?? {}));

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
stage('bound');

const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
stage('key');

const provider = new Provider(issuer, {
  clients: (config.clients ?? []).map((c) => ({
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: c.client_secret ? 'client_secret_basic' : 'none',
    ...c,
  })),
  jwks: { keys: [{ ...signingKey, kid: 'upstream-rs256', alg: 'RS256', use: 'sig' }] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  // Every client proves its code with PKCE (S256), as the downstream must always send it.
  pkce: { required: () => true },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'picture'],
  },
  // The ID token carries the scope's claims even though an access token is issued with it:
  // what Google and most providers do, and what the downstream reads first.
  conformIdTokenClaims: false,
  async findAccount(_ctx, id) {
    const claims = accounts.get(id);
    if (!claims) return undefined;
    return { accountId: id, claims: async () => ({ ...claims, sub: id }) };
  },
  features: { devInteractions: { enabled: true } },
  ttl: { Interaction: 600, Session: 3600, Grant: 3600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600 },
});
// Its development-only warnings say nothing a test needs.
provider.on('server_error', (_ctx, err) => process.stderr.write(`server_error: ${err.stack ?? err}\n`));

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.method === 'POST' && req.url === '/__test/accounts') {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      try {
        const { id, claims } = JSON.parse(body);
        if (typeof id !== 'string' || !id || typeof claims !== 'object') throw new Error('id and claims required');
        accounts.set(id, claims);
        res.writeHead(204).end();
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
      }
    });
    return;
  }
  callback(req, res);
});

stage('provider');
process.stdout.write(`listening ${issuer}\n`);
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
