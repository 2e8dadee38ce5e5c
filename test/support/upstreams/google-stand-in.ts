import http from 'node:http';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import * as jose from 'jose';

/**
 * A local stand-in for Google's OpenID Connect endpoints (real HTTP on 127.0.0.1): Google's
 * discovery fields and paths, its ID token claim shape (sub, email, email_verified, given_name,
 * family_name, name, picture, hd), RS256 keys by jose. The authorization endpoint consents at once
 * for `user` and redirects back with a code; the token endpoint checks the client, the code, the
 * redirect_uri and PKCE. Knobs let a test make it misbehave.
 *
 * `tenantTemplate: true` makes it speak as Microsoft's multi-tenant endpoint instead: discovery at
 * `{base}/common/v2.0`, issuer `{base}/{tenantid}/v2.0`, ID tokens with `tid` and iss for that tid.
 *
 * `microsoftTenant: TID` makes it speak as one Microsoft Entra tenant, at Microsoft's documented
 * paths with `{base}` for `https://login.microsoftonline.com`: discovery at
 * `/{tid}/v2.0/.well-known/openid-configuration`, issuer `{base}/{tid}/v2.0`, `/{tid}/oauth2/v2.0/authorize`,
 * `/{tid}/oauth2/v2.0/token`, keys at `/discovery/v2.0/keys`, userinfo at `/oidc/userinfo` (Graph's
 * path); ID tokens carry `tid` and `ver: "2.0"` (put `oid`, `preferred_username` … on `user`).
 * With `microsoftDomain` the same document is also served at `/{domain}/v2.0/.well-known/…`, as
 * Microsoft serves a tenant named by a domain: its issuer and endpoints still name the tenant id.
 */

export interface StandInUser {
  sub: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
  picture?: string;
  hd?: string;
  amr?: string[];
  [claim: string]: unknown;
}

export interface GoogleKnobs {
  /** The authorization endpoint answers error=access_denied. */
  deny?: boolean;
  /** The ID token carries another nonce than the request's. */
  wrongNonce?: boolean;
  /** The ID token's iss is another issuer. */
  wrongIssuer?: boolean;
  /** The ID token is signed by a key not in the JWKS (same kid). */
  otherKey?: boolean;
  /** The token endpoint answers 500. */
  tokenError500?: boolean;
  /** The ID token carries only iss/sub/aud/…: the profile is at userinfo. */
  minimalIdToken?: boolean;
  /** tenantTemplate mode: the ID token's tid, and the tenant its iss names (default: the same). */
  tid?: string;
  issTid?: string;
  /** The ID token's auth_time this many seconds before the authorization (a sign-in made earlier at the upstream). */
  authTimeAgoSeconds?: number;
  /** The ID token's aud is another client. */
  wrongAudience?: boolean;
  /** The ID token expired ten minutes ago. */
  expired?: boolean;
  /** The discovery document's issuer is this instead. */
  discoveryIssuer?: string;
}

export interface GoogleStandIn {
  base: string;
  /** What a provider's `issuer` is set to (Microsoft mode: `{base}/common/v2.0`). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  user: StandInUser;
  knobs: GoogleKnobs;
  /** The query of every authorization request, in order. */
  authorizeRequests: URLSearchParams[];
  /** Token endpoint refusals, by error code (invalid_grant for a bad PKCE verifier …). */
  tokenRefusals: string[];
  close(): Promise<void>;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string | null;
  nonce: string | null;
  user: StandInUser;
  authTime: number;
}

export const MICROSOFT_TID = '9a1d7c2e-0000-4000-8000-00000000a1d7';

/**
 * `authorizeOnOtherOrigin`: discovery names the authorization endpoint at `localhost` instead of
 * `127.0.0.1` (the same server, another origin), like providers whose login pages live on another
 * host than their issuer (Amazon Cognito's hosted UI, for one).
 */
export async function startGoogleStandIn(
  options: {
    tenantTemplate?: boolean;
    microsoftTenant?: string;
    microsoftDomain?: string;
    clientSecret?: string | null;
    authorizeOnOtherOrigin?: boolean;
  } = {},
): Promise<GoogleStandIn> {
  const { privateKey, publicKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const other = await jose.generateKeyPair('RS256');
  const kid = randomBytes(8).toString('hex');
  const jwk = { ...(await jose.exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, StandInUser>();

  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const single = options.microsoftTenant;
  const tenantPath = options.tenantTemplate ? '/common/v2.0' : single ? `/${single}/v2.0` : '';
  const published = options.tenantTemplate ? `${base}/{tenantid}/v2.0` : single ? `${base}/${single}/v2.0` : base;
  // Google's paths, or Microsoft's (login.microsoftonline.com's, and Graph's userinfo) for one tenant.
  const paths = single
    ? {
        authorize: `/${single}/oauth2/v2.0/authorize`,
        token: `/${single}/oauth2/v2.0/token`,
        jwks: '/discovery/v2.0/keys',
        userinfo: '/oidc/userinfo',
      }
    : { authorize: '/o/oauth2/v2/auth', token: '/token', jwks: '/oauth2/v3/certs', userinfo: '/v1/userinfo' };

  const standIn: GoogleStandIn = {
    base,
    issuer: `${base}${tenantPath}`,
    clientId: `${randomBytes(6).toString('hex')}.apps.googleusercontent.com`,
    clientSecret:
      options.clientSecret === null ? '' : (options.clientSecret ?? `GOCSPX-${randomBytes(12).toString('hex')}`),
    user: {
      sub: '110169484474386276334',
      email: 'ada@example.com',
      email_verified: true,
      given_name: 'Ada',
      family_name: 'Lovelace',
      name: 'Ada Lovelace',
      picture: 'https://lh3.googleusercontent.com/a/ada',
      hd: 'example.com',
    },
    knobs: {},
    authorizeRequests: [],
    tokenRefusals: [],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const discovery = () => ({
    issuer: standIn.knobs.discoveryIssuer ?? published,
    authorization_endpoint: `${options.authorizeOnOtherOrigin ? base.replace('127.0.0.1', 'localhost') : base}${paths.authorize}`,
    device_authorization_endpoint: `${base}/device/code`,
    token_endpoint: `${base}${paths.token}`,
    userinfo_endpoint: `${base}${paths.userinfo}`,
    revocation_endpoint: `${base}/revoke`,
    jwks_uri: `${base}${paths.jwks}`,
    response_types_supported: [
      'code',
      'token',
      'id_token',
      'code token',
      'code id_token',
      'token id_token',
      'code token id_token',
      'none',
    ],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    scopes_supported: ['openid', 'email', 'profile'],
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
    claims_supported: [
      'aud',
      'email',
      'email_verified',
      'exp',
      'family_name',
      'given_name',
      'iat',
      'iss',
      'name',
      'picture',
      'sub',
    ],
    code_challenge_methods_supported: ['plain', 'S256'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
    ],
  });

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const readBody = (req: http.IncomingMessage) =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });

  function authorize(url: URL, res: http.ServerResponse) {
    const q = url.searchParams;
    standIn.authorizeRequests.push(q);
    const redirectUri = q.get('redirect_uri');
    if (q.get('client_id') !== standIn.clientId || !redirectUri)
      return json(res, 400, { error: 'invalid_request', error_description: 'unknown client or no redirect_uri' });
    const back = new URL(redirectUri);
    const state = q.get('state');
    if (standIn.knobs.deny) {
      back.searchParams.set('error', 'access_denied');
      if (state) back.searchParams.set('state', state);
    } else {
      const code = `4/0A${randomBytes(16).toString('base64url')}`;
      const method = q.get('code_challenge_method');
      codes.set(code, {
        clientId: standIn.clientId,
        redirectUri,
        nonce: q.get('nonce'),
        user: { ...standIn.user },
        authTime: Math.floor(Date.now() / 1000),
        codeChallenge: q.get('code_challenge') && method === 'S256' ? q.get('code_challenge') : null,
      });
      if (state) back.searchParams.set('state', state);
      back.searchParams.set('code', code);
      if (single) back.searchParams.set('session_state', randomUUID());
      else {
        back.searchParams.set('scope', q.get('scope') ?? '');
        back.searchParams.set('authuser', '0');
        back.searchParams.set('prompt', 'consent');
      }
    }
    res.writeHead(302, { location: back.href });
    res.end();
  }

  async function token(req: http.IncomingMessage, res: http.ServerResponse) {
    const form = new URLSearchParams(await readBody(req));
    const refuse = (error: string) => {
      standIn.tokenRefusals.push(error);
      json(res, 400, { error, error_description: error });
    };
    if (standIn.knobs.tokenError500) return json(res, 500, { error: 'internal_failure' });
    let clientId = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) [clientId, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':').map(decodeURIComponent);
    if (clientId !== standIn.clientId || (standIn.clientSecret && secret !== standIn.clientSecret))
      return refuse('invalid_client');
    if (form.get('grant_type') !== 'authorization_code') return refuse('unsupported_grant_type');
    const issued = codes.get(form.get('code') ?? '');
    codes.delete(form.get('code') ?? '');
    if (!issued || issued.redirectUri !== form.get('redirect_uri')) return refuse('invalid_grant');
    if (issued.codeChallenge) {
      const verifier = form.get('code_verifier') ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== issued.codeChallenge)
        return refuse('invalid_grant');
    }
    const accessToken = `ya29.${randomBytes(24).toString('base64url')}`;
    accessTokens.set(accessToken, issued.user);
    const k = standIn.knobs;
    const { sub, amr, ...profile } = issued.user;
    const tid = k.tid ?? MICROSOFT_TID;
    const iss = k.wrongIssuer
      ? 'https://accounts.evil.example'
      : options.tenantTemplate
        ? `${base}/${k.issTid ?? tid}/v2.0`
        : published;
    const claims: jose.JWTPayload = {
      azp: standIn.clientId,
      at_hash: createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url'),
      auth_time: issued.authTime - (k.authTimeAgoSeconds ?? 0),
      ...(k.minimalIdToken ? {} : profile),
      ...(amr ? { amr } : {}),
      ...(issued.nonce ? { nonce: k.wrongNonce ? 'not-the-nonce' : issued.nonce } : {}),
      ...(options.tenantTemplate ? { tid } : {}),
      ...(single ? { tid: single, ver: '2.0' } : {}),
    };
    const now = Math.floor(Date.now() / 1000);
    const idToken = await new jose.SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setIssuer(iss)
      .setAudience(k.wrongAudience ? `${randomBytes(6).toString('hex')}.apps.googleusercontent.com` : standIn.clientId)
      .setSubject(sub)
      .setIssuedAt(k.expired ? now - 4200 : now)
      .setExpirationTime(k.expired ? now - 600 : now + 3600)
      .sign(k.otherKey ? other.privateKey : privateKey);
    json(res, 200, {
      access_token: accessToken,
      expires_in: 3599,
      refresh_token: `1//${randomBytes(16).toString('base64url')}`,
      scope: 'openid https://www.googleapis.com/auth/userinfo.email',
      token_type: 'Bearer',
      id_token: idToken,
    });
  }

  function userinfo(req: http.IncomingMessage, res: http.ServerResponse) {
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const user = bearer ? accessTokens.get(bearer) : undefined;
    if (!user) {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' });
      return res.end();
    }
    const { amr: _amr, ...claims } = user;
    json(res, 200, claims);
  }

  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', base);
    const path = url.pathname;
    if (req.method === 'GET' && path === `${tenantPath}/.well-known/openid-configuration`)
      return json(res, 200, discovery());
    if (
      req.method === 'GET' &&
      single &&
      options.microsoftDomain &&
      path === `/${options.microsoftDomain}/v2.0/.well-known/openid-configuration`
    )
      return json(res, 200, discovery());
    if (req.method === 'GET' && path === paths.jwks) return json(res, 200, { keys: [jwk] });
    if (req.method === 'GET' && path === paths.authorize) return authorize(url, res);
    if (req.method === 'POST' && path === paths.token)
      return void token(req, res).catch(() => json(res, 500, { error: 'stand_in_failure' }));
    if ((req.method === 'GET' || req.method === 'POST') && path === paths.userinfo) return userinfo(req, res);
    json(res, 404, { error: 'not_found' });
  });

  return standIn;
}
