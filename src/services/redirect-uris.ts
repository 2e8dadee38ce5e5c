import { invalidRequest } from '../errors';

/**
 * Redirect URIs: what may be registered, and how a requested one matches a registered one.
 * Matching is exact (RFC 9700 §4.1.3) except for one rule: a loopback redirect matches any
 * port, since a native app listens on whatever port the OS gives it (RFC 8252 §7.3).
 */

/** `http://127.0.0.1` or `http://[::1]`, then an optional port, then the path, query or nothing. */
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d*))?(?=[/?]|$)/;
/** The same, with `localhost` by name: only a self-registered public client can hold one (docs/decisions.md). */
const LOOPBACK_OR_LOCALHOST = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::(\d*))?(?=[/?]|$)/;

/** The URI without its port when it is an http loopback IP literal with a valid port (or none); else undefined. */
function loopbackWithoutPort(uri: string, pattern = LOOPBACK): string | undefined {
  const m = pattern.exec(uri);
  if (!m) return undefined;
  const port = m[2];
  // Written as a browser would send it: 1..65535, no leading zero, not empty.
  if (port !== undefined && !(/^[1-9]\d{0,4}$/.test(port) && Number(port) <= 65535)) return undefined;
  return `http://${m[1]}${uri.slice(m[0].length)}`;
}

/** `http://127.0.0.1[:port]/…` or `http://[::1][:port]/…`: a native app's loopback redirect (RFC 8252 §7.3). */
export const isLoopbackIpRedirectUri = (uri: string): boolean => loopbackWithoutPort(uri) !== undefined;

/** `http://localhost[:port]/…`, as MCP clients and other CLIs register it (RFC 8252 §8.3 discourages, does not forbid it). */
export const isLocalhostRedirectUri = (uri: string): boolean => /^http:\/\/localhost(?=[:/?]|$)/.test(uri) && loopbackWithoutPort(uri, LOOPBACK_OR_LOCALHOST) !== undefined;

/**
 * The redirect URI to use for `requested`, or undefined when no registered URI allows it.
 * It is always the requested string itself: the code is bound to it, and the token endpoint
 * compares the exchange's redirect_uri with it exactly.
 */
export function matchRedirectUri(registered: readonly string[], requested: string): string | undefined {
  if (registered.includes(requested)) return requested;
  // Any port on a registered loopback redirect (RFC 8252 §7.3): the host must be the same one.
  const key = loopbackWithoutPort(requested, LOOPBACK_OR_LOCALHOST);
  if (key === undefined) return undefined;
  return registered.some((r) => loopbackWithoutPort(r, LOOPBACK_OR_LOCALHOST) === key) ? requested : undefined;
}

/**
 * Registration: absolute, no fragment, https, or http on the loopback IP literal 127.0.0.1 or
 * [::1] (any port). `localhost` is refused: RFC 8252 §8.3 (the name may not resolve to the
 * loopback interface, and a listener on it may be reachable from other hosts). Throws invalid_request.
 */
export function checkRedirectUri(uri: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw invalidRequest(`redirect URI "${uri}" is not an absolute URL`);
  }
  if (url.hash || uri.includes('#')) throw invalidRequest(`redirect URI "${uri}" must not contain a fragment`);
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && loopbackWithoutPort(uri) !== undefined) return;
  if (url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname.endsWith('.localhost'))) {
    throw invalidRequest(
      `redirect URI "${uri}" uses localhost, which is not allowed: register the loopback IP literal ` +
        'http://127.0.0.1/… or http://[::1]/… instead; any port is then accepted at sign-in (RFC 8252 §7.3, §8.3)',
    );
  }
  throw invalidRequest(`redirect URI "${uri}" must use https (http is allowed only as http://127.0.0.1[:port]/… or http://[::1][:port]/…, RFC 8252 §7.3)`);
}
