import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for GitHub's OAuth app endpoints and REST API (real HTTP on 127.0.0.1), shaped
 * as GitHub documents them: `GET /login/oauth/authorize` (consents at once and redirects back with
 * a code), `POST /login/oauth/access_token` (client id/secret, code, redirect_uri, PKCE verifier;
 * JSON when asked with Accept: application/json, form-encoded otherwise; refusals are 200s with an
 * `error` field, as GitHub's are), and the API at `{base}/api/v3` (GitHub Enterprise Server's shape):
 * `GET /user`, `GET /user/emails` with the bearer token, a User-Agent and the API version header.
 */

export interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
  email: string | null;
  avatar_url: string;
  [field: string]: unknown;
}
export interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
  visibility: 'public' | 'private' | null;
}

export interface GitHubKnobs {
  /** The authorization endpoint answers error=access_denied. */
  deny?: boolean;
  /** The token endpoint refuses every code (bad_verification_code). */
  refuseToken?: boolean;
  /** The API answers 500. */
  api500?: boolean;
}

export interface GitHubStandIn {
  /** The provider's `issuer` (GitHub's web base URL). */
  base: string;
  apiBaseUrl: string;
  clientId: string;
  clientSecret: string;
  user: GitHubUser;
  emails: GitHubEmail[];
  knobs: GitHubKnobs;
  authorizeRequests: URLSearchParams[];
  /** Token endpoint refusals by error code. */
  tokenRefusals: string[];
  /** The headers of every API request. */
  apiRequests: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startGitHubStandIn(): Promise<GitHubStandIn> {
  const codes = new Map<string, { redirectUri: string | null; codeChallenge: string | null }>();
  const tokens = new Set<string>();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const standIn: GitHubStandIn = {
    base,
    apiBaseUrl: `${base}/api/v3`,
    clientId: `Iv1.${randomBytes(8).toString('hex')}`,
    clientSecret: randomBytes(20).toString('hex'),
    user: {
      id: 583231,
      login: 'octocat',
      name: 'The Octocat',
      email: null,
      avatar_url: 'https://avatars.githubusercontent.com/u/583231?v=4',
    },
    emails: [
      { email: 'octocat@users.noreply.example', primary: false, verified: true, visibility: null },
      { email: 'octocat@example.com', primary: true, verified: true, visibility: 'public' },
    ],
    knobs: {},
    authorizeRequests: [],
    tokenRefusals: [],
    apiRequests: [],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const send = (res: http.ServerResponse, status: number, body: unknown, type = 'application/json; charset=utf-8') => {
    res.writeHead(status, { 'content-type': type });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
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
    if (q.get('client_id') !== standIn.clientId || !redirectUri) return send(res, 404, 'Not Found', 'text/plain');
    const back = new URL(redirectUri);
    if (standIn.knobs.deny) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user has denied your application access.');
      back.searchParams.set(
        'error_uri',
        'https://docs.github.com/apps/troubleshooting-authorization-request-errors/#access-denied',
      );
    } else {
      const code = randomBytes(10).toString('hex');
      codes.set(code, {
        redirectUri,
        codeChallenge: q.get('code_challenge_method') === 'S256' ? q.get('code_challenge') : null,
      });
      back.searchParams.set('code', code);
    }
    const state = q.get('state');
    if (state) back.searchParams.set('state', state);
    res.writeHead(302, { location: back.href });
    res.end();
  }

  async function accessToken(req: http.IncomingMessage, res: http.ServerResponse) {
    const form = new URLSearchParams(await readBody(req));
    const asJson = /application\/json/.test(req.headers.accept ?? '');
    const answer = (body: Record<string, string>) =>
      asJson
        ? send(res, 200, body)
        : send(res, 200, new URLSearchParams(body).toString(), 'application/x-www-form-urlencoded; charset=utf-8');
    const refuse = (error: string) => {
      standIn.tokenRefusals.push(error);
      answer({
        error,
        error_description: error.replace(/_/g, ' '),
        error_uri:
          'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors',
      });
    };
    let clientId = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) [clientId, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':').map(decodeURIComponent);
    if (clientId !== standIn.clientId || secret !== standIn.clientSecret) return refuse('incorrect_client_credentials');
    const code = form.get('code') ?? '';
    const issued = codes.get(code);
    codes.delete(code);
    if (standIn.knobs.refuseToken || !issued) return refuse('bad_verification_code');
    if (form.get('redirect_uri') !== issued.redirectUri) return refuse('redirect_uri_mismatch');
    if (
      issued.codeChallenge &&
      createHash('sha256')
        .update(form.get('code_verifier') ?? '')
        .digest('base64url') !== issued.codeChallenge
    )
      return refuse('bad_verification_code');
    const token = `gho_${randomBytes(18).toString('base64url')}`;
    tokens.add(token);
    answer({ access_token: token, scope: 'read:user,user:email', token_type: 'bearer' });
  }

  function api(req: http.IncomingMessage, res: http.ServerResponse, path: string) {
    standIn.apiRequests.push(req.headers);
    if (standIn.knobs.api500) return send(res, 500, { message: 'Server Error' });
    if (!req.headers['user-agent'])
      return send(res, 403, {
        message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.',
      });
    const token = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!token || !tokens.has(token))
      return send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
    if (path === '/user') return send(res, 200, standIn.user);
    if (path === '/user/emails') return send(res, 200, standIn.emails);
    send(res, 404, { message: 'Not Found' });
  }

  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', base);
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') return authorize(url, res);
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') return void accessToken(req, res);
    if (req.method === 'GET' && url.pathname.startsWith('/api/v3/'))
      return api(req, res, url.pathname.slice('/api/v3'.length));
    send(res, 404, { message: 'Not Found' });
  });

  return standIn;
}
