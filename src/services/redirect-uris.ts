import { invalidRequest } from '../errors';
import { LOOPBACK_OR_LOCALHOST, loopbackWithoutPort, redirectUriProblem } from '../domain/redirect-uri';

/**
 * Redirect URIs: what may be registered, and how a requested one matches a registered one.
 * Matching is exact (RFC 9700 §4.1.3) except for one rule: a loopback redirect matches any
 * port, since a native app listens on whatever port the OS gives it (RFC 8252 §7.3).
 */

/** `http://127.0.0.1[:port]/…` or `http://[::1][:port]/…`: a native app's loopback redirect (RFC 8252 §7.3). */
export const isLoopbackIpRedirectUri = (uri: string): boolean => loopbackWithoutPort(uri) !== undefined;

/** `http://localhost[:port]/…`, as MCP clients and other CLIs register it (RFC 8252 §8.3 discourages, does not forbid it). */
export const isLocalhostRedirectUri = (uri: string): boolean =>
  /^http:\/\/localhost(?=[:/?]|$)/.test(uri) && loopbackWithoutPort(uri, LOOPBACK_OR_LOCALHOST) !== undefined;

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

/** Registration: the rules of src/domain/redirect-uri.ts (`redirectUriProblem`). Throws invalid_request. */
export function checkRedirectUri(uri: string): void {
  const problem = redirectUriProblem(uri);
  if (problem !== undefined) throw invalidRequest(problem);
}
