// The benchmark rows, built the same way for Latchkey and for the peer: only endpoint
// paths and the extra tenant parameter (platform_guid) differ.
import { authorizeFlow, basicAuth, CookieJar, form, mapPool, request, type Credentials } from './http';
import { CONNECTIONS, type RowSpec } from './load';

export const ROWS = [
  'discovery',
  'jwks',
  'userinfo',
  'introspection',
  'refresh',
  'code',
  'signin',
  'client_credentials',
  'token_exchange',
] as const;
export type RowName = (typeof ROWS)[number];
export const ROW_TITLES: Record<RowName, string> = {
  discovery: 'discovery',
  jwks: 'JWKS',
  userinfo: 'userinfo (Bearer)',
  introspection: 'introspection (Basic)',
  refresh: 'refresh_token grant',
  code: 'authorization_code exchange',
  signin: 'full sign-in',
  client_credentials: 'client credentials',
  token_exchange: 'token exchange',
};

export interface Target {
  name: 'ours' | 'peer' | 'express' | 'node';
  label: string;
  base: string;
  pid: number;
  rows: Partial<Record<RowName, RowSpec>>;
  stop: () => Promise<void>;
  notes?: string[];
  driver?: OidcDriver;
}

export interface OidcConfig {
  base: string;
  paths: { discovery: string; jwks: string; authorize: string; token: string; userinfo: string; introspect: string };
  /** Tenant parameters: query on GET endpoints, body on POST endpoints. */
  tenant: Record<string, string>;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  scope: string;
  creds: Credentials;
  /** Extra authorize parameters for a fresh browser (full sign-in row). */
  freshAuthorizeParams?: Record<string, string>;
  /** Extra authorize parameters for a browser that already holds a session (pool minting). */
  sessionAuthorizeParams?: Record<string, string>;
}

export interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
}

export class OidcDriver {
  private sessions = new Map<number, Promise<CookieJar>>();
  /** Observations worth reporting (deviations worked around while building the rows). */
  readonly notes: string[] = [];
  readonly basic: string;
  constructor(readonly c: OidcConfig) {
    this.basic = basicAuth(c.clientId, c.clientSecret);
  }

  withQuery(path: string, params: Record<string, string> = {}): string {
    const q = new URLSearchParams({ ...this.c.tenant, ...params }).toString();
    return q ? `${path}${path.includes('?') ? '&' : '?'}${q}` : path;
  }

  authorizeUrl(extra: Record<string, string> = {}): string {
    return (
      this.c.base +
      this.withQuery(this.c.paths.authorize, {
        response_type: 'code',
        client_id: this.c.clientId,
        redirect_uri: this.c.redirectUri,
        scope: this.c.scope,
        state: 'bench-state',
        ...extra,
      })
    );
  }

  async exchange(code: string): Promise<TokenResponse> {
    const r = await request(this.c.base + this.c.paths.token, {
      method: 'POST',
      headers: {
        authorization: this.basic,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form({ grant_type: 'authorization_code', code, redirect_uri: this.c.redirectUri, ...this.c.tenant }),
    });
    if (r.status !== 200) throw new Error(`code exchange: HTTP ${r.status} ${r.body.slice(0, 300)}`);
    const t = JSON.parse(r.body) as TokenResponse;
    if (!t.access_token) throw new Error(`code exchange: no access_token in ${r.body.slice(0, 300)}`);
    return t;
  }

  /** One complete fresh-browser sign-in: authorize → sign-in form → (consent) → code → token. */
  async fullSignIn(onSteps?: (steps: string[]) => void): Promise<TokenResponse> {
    const jar = new CookieJar();
    const { code, steps } = await authorizeFlow(
      jar,
      this.authorizeUrl(this.c.freshAuthorizeParams),
      this.c.redirectUri,
      this.c.creds,
    );
    onSteps?.(steps);
    return this.exchange(code);
  }

  /** Browser sessions (one per worker) used to mint codes without a password check each time. */
  private session(w: number): Promise<CookieJar> {
    let s = this.sessions.get(w);
    if (!s) {
      s = (async () => {
        const jar = new CookieJar();
        await authorizeFlow(jar, this.authorizeUrl(this.c.freshAuthorizeParams), this.c.redirectUri, this.c.creds);
        return jar;
      })();
      this.sessions.set(w, s);
    }
    return s;
  }

  async mintCodes(n: number): Promise<string[]> {
    return mapPool(n, CONNECTIONS, async (_i, w) => {
      const jar = await this.session(w);
      const { code } = await authorizeFlow(
        jar,
        this.authorizeUrl(this.c.sessionAuthorizeParams),
        this.c.redirectUri,
        this.c.creds,
      );
      return code;
    });
  }

  async mintRefreshTokens(n: number): Promise<string[]> {
    return mapPool(n, CONNECTIONS, async (_i, w) => {
      const jar = await this.session(w);
      const { code } = await authorizeFlow(
        jar,
        this.authorizeUrl(this.c.sessionAuthorizeParams),
        this.c.redirectUri,
        this.c.creds,
      );
      const t = await this.exchange(code);
      if (!t.refresh_token) throw new Error('token response without refresh_token (offline_access not granted?)');
      return t.refresh_token;
    });
  }

  /**
   * Builds every row. One access token serves the userinfo and introspection rows. A
   * failure to obtain it (or a failed sanity check) turns only the dependent rows into
   * "n/a" with the reason, so discovery and JWKS can still be measured.
   */
  async rows(): Promise<Partial<Record<RowName, RowSpec>>> {
    const form_ = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    const rows: Partial<Record<RowName, RowSpec>> = {
      discovery: { kind: 'static', method: 'GET', path: this.withQuery(this.c.paths.discovery) },
      jwks: { kind: 'static', method: 'GET', path: this.withQuery(this.c.paths.jwks) },
    };
    for (const r of ['discovery', 'jwks'] as const) {
      const spec = rows[r] as { path: string };
      const resp = await request(this.c.base + spec.path).catch((e: Error) => ({ status: 0, body: e.message }));
      if (resp.status !== 200)
        rows[r] = { kind: 'na', reason: `sanity check failed: HTTP ${resp.status} ${resp.body.slice(0, 160)}` };
    }
    let tokens: TokenResponse;
    try {
      tokens = await this.fullSignIn();
    } catch (err) {
      const reason = `could not sign in and obtain tokens: ${(err as Error).message.slice(0, 400)}`;
      for (const r of ['userinfo', 'introspection', 'refresh', 'code', 'signin'] as const)
        rows[r] = { kind: 'na', reason };
      return rows;
    }
    rows.signin = {
      kind: 'flow',
      run: async () => {
        await this.fullSignIn();
      },
    };

    // userinfo: the spec gives only the Bearer header; the discovery document may carry
    // the tenant in the endpoint URL. Use the bare path when it works, else the
    // discovery-advertised URL (as a standard relying party would), and say so.
    const bearer = { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' };
    let uiPath = this.c.paths.userinfo;
    let ui = await request(this.c.base + uiPath, { headers: bearer });
    if (ui.status !== 200) {
      const bare = `HTTP ${ui.status} ${ui.body.slice(0, 160)}`;
      try {
        const disco = JSON.parse((await request(this.c.base + this.withQuery(this.c.paths.discovery))).body) as {
          userinfo_endpoint?: string;
        };
        const u = new URL(disco.userinfo_endpoint ?? '');
        if (u.origin === new URL(this.c.base).origin && u.pathname + u.search !== uiPath) {
          uiPath = u.pathname + u.search;
          ui = await request(this.c.base + uiPath, { headers: bearer });
          if (ui.status === 200)
            this.notes.push(
              `userinfo: \`GET ${this.c.paths.userinfo}\` with only the Bearer header answered ${bare}; measured the discovery-advertised \`${uiPath}\` instead`,
            );
        }
      } catch {
        /* keep the first failure */
      }
    }
    rows.userinfo =
      ui.status === 200
        ? { kind: 'static', method: 'GET', path: uiPath, headers: bearer }
        : { kind: 'na', reason: `sanity check failed: HTTP ${ui.status} ${ui.body.slice(0, 160)}` };

    const introBody = form({ token: tokens.access_token, ...this.c.tenant });
    const intro = await request(this.c.base + this.c.paths.introspect, {
      method: 'POST',
      headers: { ...form_, authorization: this.basic },
      body: introBody,
    });
    let active = false;
    try {
      active = intro.status === 200 && JSON.parse(intro.body).active === true;
    } catch {
      /* not JSON */
    }
    rows.introspection = active
      ? {
          kind: 'static',
          method: 'POST',
          path: this.c.paths.introspect,
          headers: { ...form_, authorization: this.basic },
          body: introBody,
        }
      : { kind: 'na', reason: `sanity check failed: HTTP ${intro.status} ${intro.body.slice(0, 160)}` };

    rows.code = {
      kind: 'pool',
      method: 'POST',
      path: this.c.paths.token,
      headers: { ...form_, authorization: this.basic },
      body: (c) =>
        form({ grant_type: 'authorization_code', code: c, redirect_uri: this.c.redirectUri, ...this.c.tenant }),
      mint: (n) => this.mintCodes(n),
    };
    try {
      await this.mintCodes(1); // also opens the minting sessions' first browser
    } catch (err) {
      rows.code = {
        kind: 'na',
        reason: `could not mint codes with a signed-in session: ${(err as Error).message.slice(0, 300)}`,
      };
    }

    if (!tokens.refresh_token) {
      rows.refresh = { kind: 'na', reason: 'token response has no refresh_token (offline_access not granted?)' };
    } else {
      const rt = await request(this.c.base + this.c.paths.token, {
        method: 'POST',
        headers: { ...form_, authorization: this.basic },
        body: form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...this.c.tenant }),
      });
      rows.refresh =
        rt.status === 200 && rows.code.kind === 'pool'
          ? {
              kind: 'pool',
              method: 'POST',
              path: this.c.paths.token,
              headers: { ...form_, authorization: this.basic },
              body: (t) => form({ grant_type: 'refresh_token', refresh_token: t, ...this.c.tenant }),
              mint: (n) => this.mintRefreshTokens(n),
            }
          : {
              kind: 'na',
              reason:
                rt.status !== 200
                  ? `sanity check failed: HTTP ${rt.status} ${rt.body.slice(0, 160)}`
                  : 'cannot mint codes',
            };
    }
    return rows;
  }
}
