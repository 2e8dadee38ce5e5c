// Peer: oidc-provider v9 (node-oidc-provider) configured as close to Latchkey as it goes:
//   * its own in-memory adapter class (lib/adapters/memory_adapter.js), over a larger LRU
//     so the benchmark's pre-issued token pools are not evicted (the default holds ~1000);
//   * one confidential client: client_secret_basic, HS512 ID tokens (keyed with the secret),
//     grant types authorization_code + refresh_token, redirect_uri on http://127.0.0.1;
//   * introspection and revocation enabled; refresh tokens always issued and rotated;
//   * the same client allowed client_credentials, with resource indicators: one resource server
//     whose access tokens are RS256 JWTs (as Latchkey's RFC 9068 tokens are), for the
//     client-credentials row;
//   * a custom interaction (interactions.url) with a sign-in form whose POST verifies an
//     argon2id hash at the production parameters (m=19 MiB, t=2, p=1) — the same work
//     Latchkey does — and "remembered" consent through loadExistingGrant (the documented
//     first-party pattern: a grant is materialised per authorization for a client the user
//     already consented to, so no consent page is shown).
// Started by bench/peer.ts as a child process; prints one line "READY <json>" when listening.
import http from 'node:http';
import crypto from 'node:crypto';
import argon2 from 'argon2';
import Provider, { errors } from 'oidc-provider';
import LRU from 'oidc-provider/lib/helpers/lru.js';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';

// oidc-provider's own MemoryAdapter class, over one larger LRU store: the default store it
// creates holds ~1000 entries, which silently evicts pre-issued codes and tokens.
const store = new LRU({ maxSize: Number(process.env.PEER_LRU_SIZE || 2_000_000) });
const adapter = (model) => new MemoryAdapter(model, store);

const ACCOUNT = {
  sub: '6a3c1f2e-0d7b-4c55-9a8e-3f1d2b4c5e6f',
  email: 'bench@example.com',
  password: 'correct horse battery staple',
};
const CLIENT_ID = 'bench-client';
// HS512 ID tokens are keyed with the client secret: >= 64 octets (OIDC Core 16.19).
const CLIENT_SECRET = crypto.randomBytes(64).toString('base64url');
const REDIRECT_URI = 'http://127.0.0.1:9/cb';
const SCOPE = 'openid profile email offline_access';
// The client-credentials row's resource server, as Latchkey's benchmark registers it.
const RESOURCE = 'https://api.bench.example/';
const RESOURCE_SCOPE = 'orders:read orders:write';

const passwordHash = await argon2.hash(ACCOUNT.password, {
  type: argon2.argon2id,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
});

const claims = {
  sub: ACCOUNT.sub,
  human_guid: ACCOUNT.sub,
  name: 'Bench User',
  given_name: 'Bench',
  family_name: 'User',
  birthdate: '1990-01-01',
  picture: 'http://127.0.0.1/avatar.png',
  updated_at: 1700000000,
  email: ACCOUNT.email,
  email_verified: true,
};

const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signingJwk = { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: 'bench-es256' };
// RS256 for the resource server's JWT access tokens: Latchkey signs its access tokens with RSA-2048 too.
const { privateKey: rsaKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaJwk = { ...rsaKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig', kid: 'bench-rs256' };

let handler = (_req, res) => {
  res.statusCode = 503;
  res.end();
};
const server = http.createServer((req, res) => handler(req, res));
server.keepAliveTimeout = 65_000;
await new Promise((resolve) => server.listen(Number(process.env.PORT || 0), '127.0.0.1', resolve));
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  adapter,
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [REDIRECT_URI],
      response_types: ['code'],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'HS512',
    },
  ],
  jwks: { keys: [signingJwk, rsaJwk] },
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  scopes: ['openid', 'profile', 'email', 'offline_access'],
  claims: {
    openid: ['sub', 'human_guid'],
    profile: ['name', 'given_name', 'family_name', 'birthdate', 'picture', 'updated_at'],
    email: ['email', 'email_verified'],
  },
  enabledJWA: { idTokenSigningAlgValues: ['HS512', 'ES256'] },
  features: {
    devInteractions: { enabled: false },
    introspection: { enabled: true },
    revocation: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // No resource named: the code and refresh rows' tokens stay opaque and good for userinfo.
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => false,
      getResourceServerInfo(_ctx, resourceIndicator) {
        if (resourceIndicator !== RESOURCE) throw new errors.InvalidTarget();
        return {
          scope: RESOURCE_SCOPE,
          audience: RESOURCE,
          accessTokenTTL: 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  pkce: { required: () => false }, // Latchkey: PKCE optional for confidential clients
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(_ctx, sub) {
    if (sub !== ACCOUNT.sub) return undefined;
    return {
      accountId: sub,
      async claims() {
        return claims;
      },
    };
  },
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId;
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const accountId = ctx.oidc.session?.accountId;
    if (!accountId) return undefined;
    // Consent remembered for this (account, client): materialise a grant for this authorization.
    const grant = new ctx.oidc.provider.Grant({ accountId, clientId: ctx.oidc.client.clientId });
    grant.addOIDCScope(SCOPE);
    await grant.save();
    return grant;
  },
  async issueRefreshToken(_ctx, client) {
    return client.grantTypeAllowed('refresh_token');
  },
  rotateRefreshToken: true,
  async expiresWithSession() {
    return false;
  },
  ttl: {
    AuthorizationCode: 600, // long enough for the benchmark's pre-issued pools
    AccessToken: 3600,
    IdToken: 3600,
    RefreshToken: 86400,
    Grant: 86400,
    Session: 86400,
    Interaction: 600,
  },
});
provider.on('server_error', (_ctx, err) => {
  console.error('peer server_error', err);
});

const page = (title, inner) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1>${inner}</main></body></html>`;

function readBody(req) {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      data += c;
      if (data.length > 65536) reject(new Error('body too large'));
    });
    req.on('end', () => resolve(new URLSearchParams(data)));
    req.on('error', reject);
  });
}

async function interaction(req, res) {
  const url = new URL(req.url, issuer);
  const m = /^\/interaction\/([\w-]+)(?:\/(login|confirm))?$/.exec(url.pathname);
  if (!m) {
    res.statusCode = 404;
    res.end();
    return;
  }
  const [, uid, action] = m;
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) {
    res.statusCode = 400;
    res.end('uid mismatch');
    return;
  }
  if (req.method === 'GET' && !action) {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    if (details.prompt.name === 'login') {
      res.end(
        page(
          'Sign in',
          `<form method="post" action="/interaction/${uid}/login">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
<button type="submit">Sign in</button></form>`,
        ),
      );
    } else {
      res.end(
        page(
          'Consent',
          `<form method="post" action="/interaction/${uid}/confirm">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></form>`,
        ),
      );
    }
    return;
  }
  if (req.method === 'POST' && action === 'login') {
    const body = await readBody(req);
    const ok =
      (body.get('email') || '').toLowerCase() === ACCOUNT.email &&
      (await argon2.verify(passwordHash, body.get('password') || ''));
    if (!ok) {
      res.statusCode = 401;
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(page('Sign in', '<p>Invalid email or password</p>'));
      return;
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: ACCOUNT.sub } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (req.method === 'POST' && action === 'confirm') {
    const body = await readBody(req);
    if (body.get('decision') !== 'allow') {
      await provider.interactionFinished(req, res, { error: 'access_denied' }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    grant.addOIDCScope(SCOPE);
    await provider.interactionFinished(
      req,
      res,
      { consent: { grantId: await grant.save() } },
      { mergeWithLastSubmission: true },
    );
    return;
  }
  res.statusCode = 405;
  res.end();
}

const callback = provider.callback();
handler = (req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((err) => {
      console.error('peer interaction error', err);
      if (!res.headersSent) {
        res.statusCode = 500;
        res.end();
      }
    });
    return;
  }
  callback(req, res);
};

console.log(
  `READY ${JSON.stringify({
    port,
    issuer,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    resource: RESOURCE,
    email: ACCOUNT.email,
    password: ACCOUNT.password,
    sub: ACCOUNT.sub,
  })}`,
);

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', () => process.exit(0));
