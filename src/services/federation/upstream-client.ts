import * as oc from 'openid-client';
import type { UpstreamFailure, UpstreamProfile, UpstreamProvider } from '../../domain/upstream';
import { OutboundRequestError, outboundFetchFromConfig } from '../../net/outbound-fetch';
import { digest } from '../../crypto/digest';
import { createTtlCache } from '../ttl-cache';
import type { Deps } from '../deps';
import type { UpstreamProviders } from './providers.service';
import { discoverOidc, oidcCodeGrant, configureUpstream, type OidcUpstream } from './oidc';
import { githubClaims, githubConfiguration } from './github';
import { isLoopbackHttp, upstreamCustomFetch, UpstreamUnavailable } from './upstream-http';

/** What the browser's session keeps between begin and the callback (never shown to the upstream but state). */
export interface PendingUpstream {
  providerId: string;
  slug: string;
  state: string;
  /** '' for GitHub (no ID token). */
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  maxAge?: number;
  /** Epoch milliseconds by deps.now. */
  createdAt: number;
}

/** Why an upstream sign-in failed; the failure page names `providerName`. The message is for logs only. */
export class UpstreamSignInError extends Error {
  constructor(
    readonly reason: UpstreamFailure,
    readonly providerName: string,
    /** The upstream's own error code (error=access_denied …) when reason is 'upstream_error'. */
    readonly upstreamError?: string,
  ) {
    super(`upstream sign-in with ${providerName} failed: ${reason}${upstreamError ? ` (${upstreamError})` : ''}`);
    this.name = 'UpstreamSignInError';
  }
}

export interface BeginOptions {
  redirectUri: string;
  prompt?: string;
  maxAge?: number;
  loginHint?: string;
}

const CONFIG_TTL_MS = 60 * 60 * 1000;
/** RFC 6749 error codes are NQSCHAR; anything else is not repeated on a page or in a log. */
const ERROR_CODE = /^[\w.-]{1,64}$/;

/** Down (network, timeout, 5xx) or not: everything that is not down is an answer that did not verify. */
function reasonOf(err: unknown): UpstreamFailure {
  for (let e = err, depth = 0; e && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof UpstreamSignInError) return e.reason;
    if (e instanceof OutboundRequestError || e instanceof UpstreamUnavailable) return 'unreachable';
    const code = (e as { code?: unknown }).code;
    if (code === 'OAUTH_TIMEOUT' || code === 'OAUTH_ABORT') return 'unreachable';
  }
  return 'invalid_response';
}

/**
 * The error chain for the log: names, codes, the claim a JWT check failed on, and messages — but
 * not a SyntaxError's, whose message quotes the body it could not parse (a token response).
 */
function causesOf(err: unknown): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
    const { code, cause } = e as { code?: unknown; cause?: unknown };
    const claim =
      cause && !(cause instanceof Error) && typeof (cause as { claim?: unknown }).claim === 'string'
        ? (cause as { claim: string }).claim
        : undefined;
    out.push({
      name: e.name,
      ...(typeof code === 'string' ? { code } : {}),
      ...(claim ? { claim } : {}),
      ...(e instanceof SyntaxError ? {} : { message: e.message }),
    });
  }
  return out;
}

const claimString = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

/** The claims under their local names (claim_mapping: local claim → the upstream's name for it), as a profile. */
function profileOf(
  provider: UpstreamProvider,
  claims: Record<string, unknown>,
): Omit<UpstreamProfile, 'tokens'> | undefined {
  const read = (claim: keyof UpstreamProvider['claimMapping']) => claims[provider.claimMapping[claim] ?? claim];
  const subject = claimString(claims.sub);
  if (!subject) return undefined;
  const verified = read('email_verified');
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((v): v is string => typeof v === 'string') : null;
  return {
    providerId: provider.id,
    subject,
    email: claimString(read('email')),
    // Some upstreams send the string "true"; trusting it is the caller's decision (provider.trustEmail).
    emailVerified: verified === true || verified === 'true',
    givenName: claimString(read('given_name')),
    familyName: claimString(read('family_name')),
    name: claimString(read('name')),
    picture: claimString(read('picture')),
    amr,
  };
}

/**
 * The calls toward upstream identity providers: `begin` builds the authorization URL
 * (PKCE S256, state, nonce) and what the browser's session must keep; `finish` checks the callback,
 * exchanges the code, verifies the answer and returns the profile. Every call goes through the
 * SSRF-guarded outbound fetch; tokens and secrets are never logged.
 */
export function createUpstreamClient(deps: Deps, providers: UpstreamProviders) {
  const outbound = outboundFetchFromConfig(deps.config);
  const fetch = upstreamCustomFetch(outbound);
  // Discovery (and the JWKS openid-client keeps on the configuration), per provider version.
  const oidcCache = createTtlCache<OidcUpstream>(deps.now, { ttlMs: CONFIG_TTL_MS, max: 1000 });

  const accessOf = (provider: UpstreamProvider, clientSecret: string | null) => ({
    clientSecret,
    fetch,
    insecure: isLoopbackHttp(provider.issuer) && !deps.config.isProduction,
  });

  function fail(
    provider: Pick<UpstreamProvider, 'slug' | 'displayName'>,
    platformId: string,
    step: string,
    err: unknown,
  ): never {
    const reason = reasonOf(err);
    const e = err as { error?: unknown };
    deps.logger.warn(
      {
        platformId,
        provider: provider.slug,
        step,
        reason,
        upstreamError: typeof e?.error === 'string' && ERROR_CODE.test(e.error) ? e.error : undefined,
        causes: causesOf(err),
      },
      'upstream sign-in failed',
    );
    if (err instanceof UpstreamSignInError) throw err;
    throw new UpstreamSignInError(reason, provider.displayName);
  }

  async function oidcUpstream(
    platformId: string,
    provider: UpstreamProvider,
    clientSecret: string | null,
  ): Promise<OidcUpstream> {
    try {
      // the secret is in the configuration (client auth): a new secret is a new entry, like a new issuer
      const version = digest(
        JSON.stringify([provider.updatedAt.getTime(), provider.issuer, provider.clientId, clientSecret]),
      );
      return await oidcCache.getOrLoad(`${provider.id}:${version}`, () =>
        discoverOidc(provider, accessOf(provider, clientSecret)),
      );
    } catch (err) {
      return fail(provider, platformId, 'discovery', err);
    }
  }

  const githubOf = (provider: UpstreamProvider, clientSecret: string | null) =>
    configureUpstream(githubConfiguration(provider, clientSecret), accessOf(provider, clientSecret));

  return {
    /** undefined: no enabled provider by that slug on the platform. */
    async begin(
      platformId: string,
      slug: string,
      opts: BeginOptions,
    ): Promise<{ provider: UpstreamProvider; authorizationUrl: string; pending: PendingUpstream } | undefined> {
      const found = await providers.forSignIn(platformId, slug);
      if (!found) return undefined;
      const { provider, clientSecret } = found;
      const isGithub = provider.kind === 'github';
      const config = isGithub
        ? githubOf(provider, clientSecret)
        : (await oidcUpstream(platformId, provider, clientSecret)).config;
      const codeVerifier = oc.randomPKCECodeVerifier();
      const state = oc.randomState();
      const nonce = isGithub ? '' : oc.randomNonce();
      const params: Record<string, string> = {
        response_type: 'code',
        redirect_uri: opts.redirectUri,
        scope: provider.scopes.join(' '),
        state,
        code_challenge: await oc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      };
      // GitHub knows none of these (its `prompt` takes select_account only; `login` is a user name).
      if (!isGithub) {
        params.nonce = nonce;
        if (opts.prompt) params.prompt = opts.prompt;
        if (opts.maxAge !== undefined) params.max_age = String(opts.maxAge);
        if (opts.loginHint) params.login_hint = opts.loginHint;
      }
      const authorizationUrl = oc.buildAuthorizationUrl(config, params).href;
      const pending: PendingUpstream = {
        providerId: provider.id,
        slug: provider.slug,
        state,
        nonce,
        codeVerifier,
        redirectUri: opts.redirectUri,
        createdAt: deps.now().getTime(),
        ...(opts.maxAge !== undefined && !isGithub ? { maxAge: opts.maxAge } : {}),
      };
      return { provider, authorizationUrl, pending };
    },

    /** The callback: `callbackUrl` is the request's URL (its query is what the upstream sent back). */
    async finish(platformId: string, pending: PendingUpstream, callbackUrl: URL): Promise<UpstreamProfile> {
      const found = await providers.forSignIn(platformId, pending.slug);
      const named = found?.provider ?? { slug: pending.slug, displayName: pending.slug };
      // The provider was removed, disabled or replaced since begin: this sign-in is not the one pending.
      if (!found || found.provider.id !== pending.providerId)
        return fail(named, platformId, 'callback', new UpstreamSignInError('state_mismatch', named.displayName));
      const { provider, clientSecret } = found;
      const query = callbackUrl.searchParams;

      // State first: an error answer that is not for this browser's request is not believed either.
      if (!pending.state || query.get('state') !== pending.state)
        return fail(provider, platformId, 'callback', new UpstreamSignInError('state_mismatch', provider.displayName));
      const upstreamError = query.get('error');
      if (upstreamError !== null) {
        return fail(
          provider,
          platformId,
          'callback',
          new UpstreamSignInError(
            'upstream_error',
            provider.displayName,
            ERROR_CODE.test(upstreamError) ? upstreamError : 'invalid_error',
          ),
        );
      }
      // The token request's redirect_uri must be the one the authorization request carried, whatever
      // host or path the callback was reached by (openid-client takes it from this URL).
      const current = new URL(pending.redirectUri);
      for (const [k, v] of query) current.searchParams.append(k, v);
      const checks: oc.AuthorizationCodeGrantChecks = {
        expectedState: pending.state,
        pkceCodeVerifier: pending.codeVerifier,
      };

      let claims: Record<string, unknown>;
      let tokens: { access_token: string; refresh_token?: string; id_token?: string; expires_in?: number };
      try {
        if (provider.kind === 'github') {
          tokens = await oc.authorizationCodeGrant(githubOf(provider, clientSecret), current, {
            ...checks,
            idTokenExpected: false,
          });
          claims = await githubClaims(outbound, provider.apiBaseUrl!, tokens.access_token);
        } else {
          const upstream = await oidcUpstream(platformId, provider, clientSecret);
          const access = accessOf(provider, clientSecret);
          const granted = await oidcCodeGrant(provider, upstream, access, current, {
            ...checks,
            expectedNonce: pending.nonce,
            ...(pending.maxAge !== undefined ? { maxAge: pending.maxAge } : {}),
          });
          tokens = granted.tokens;
          claims = { ...(granted.tokens.claims() ?? {}) };
          const mapped = (c: string) => provider.claimMapping[c as keyof UpstreamProvider['claimMapping']] ?? c;
          if (
            (claims[mapped('email')] === undefined || claims[mapped('name')] === undefined) &&
            granted.config.serverMetadata().userinfo_endpoint &&
            typeof claims.sub === 'string'
          ) {
            // userinfo fills what the ID token left out; it never overrides a verified ID token claim (sub is checked to match)
            const info = await oc.fetchUserInfo(granted.config, tokens.access_token, claims.sub);
            claims = { ...info, ...claims };
          }
        }
      } catch (err) {
        return fail(provider, platformId, 'token', err);
      }

      const profile = profileOf(provider, claims);
      if (!profile)
        return fail(provider, platformId, 'profile', new UpstreamSignInError('no_subject', provider.displayName));
      if (!provider.storeTokens) return profile;
      return {
        ...profile,
        tokens: {
          accessToken: tokens.access_token,
          ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
          ...(tokens.id_token ? { idToken: tokens.id_token } : {}),
          // epoch seconds, as a JWT's exp
          ...(typeof tokens.expires_in === 'number'
            ? { expiresAt: Math.floor(deps.now().getTime() / 1000) + tokens.expires_in }
            : {}),
        },
      };
    },
  };
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>;
