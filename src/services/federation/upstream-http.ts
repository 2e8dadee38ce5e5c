import type { CustomFetch } from 'openid-client';
import type { OutboundFetch } from '../../net/outbound-fetch';

/** An upstream answered 5xx: it is down, not lying (the failure page says "unreachable"). */
export class UpstreamUnavailable extends Error {
  constructor(host: string, status: number) {
    super(`${host} answered ${status}`);
    this.name = 'UpstreamUnavailable';
  }
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

function bodyText(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body).toString('utf8');
  throw new TypeError('unsupported request body for an upstream call');
}

/**
 * openid-client's `customFetch` over the SSRF-guarded outbound fetch: every call
 * toward an upstream (discovery, JWKS, token, userinfo) gets the guard, the timeout and the size
 * cap. A 5xx becomes UpstreamUnavailable so the caller can tell "down" from "invalid".
 */
export function upstreamCustomFetch(outbound: OutboundFetch): CustomFetch {
  return async (url, options) => {
    const res = await outbound(url, { method: options.method, headers: options.headers, body: bodyText(options.body) });
    if (res.status >= 500) throw new UpstreamUnavailable(new URL(url).host, res.status);
    return new Response(NULL_BODY_STATUSES.has(res.status) ? null : res.body, {
      status: res.status,
      headers: res.headers,
    });
  };
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** http to a loopback host: a local upstream (development, tests); openid-client refuses http otherwise. */
export const isLoopbackHttp = (url: string): boolean => {
  const u = new URL(url);
  return u.protocol === 'http:' && LOOPBACK.has(u.hostname);
};
