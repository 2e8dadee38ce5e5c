/**
 * Redirect URIs, the pure rules: what may be registered (RFC 8252 for native apps, RFC 9700 for
 * the rest). src/services/redirect-uris.ts throws them as invalid_request and matches requests.
 */

/** `http://127.0.0.1` or `http://[::1]`, then an optional port, then the path, query or nothing. */
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d*))?(?=[/?]|$)/;
/** The same, with `localhost` by name: only a self-registered public client can hold one (docs/decisions.md). */
export const LOOPBACK_OR_LOCALHOST = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::(\d*))?(?=[/?]|$)/;

/** The URI without its port when it is an http loopback IP literal (or, with that pattern, localhost) with a valid port (or none); else undefined. */
export function loopbackWithoutPort(uri: string, pattern = LOOPBACK): string | undefined {
  const m = pattern.exec(uri);
  if (!m) return undefined;
  const port = m[2];
  // Written as a browser would send it: 1..65535, no leading zero, not empty.
  if (port !== undefined && !(/^[1-9]\d{0,4}$/.test(port) && Number(port) <= 65535)) return undefined;
  return `http://${m[1]}${uri.slice(m[0].length)}`;
}

/**
 * Why `uri` cannot be registered, or undefined when it can: absolute, no fragment, https, or http
 * on the loopback IP literal 127.0.0.1 or [::1] (any port). `localhost` is refused: RFC 8252 §8.3
 * (the name may not resolve to the loopback interface, and a listener on it may be reachable from
 * other hosts).
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect URI "${uri}" is not an absolute URL`;
  }
  if (url.hash || uri.includes('#')) return `redirect URI "${uri}" must not contain a fragment`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && loopbackWithoutPort(uri) !== undefined) return undefined;
  if (url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname.endsWith('.localhost'))) {
    return (
      `redirect URI "${uri}" uses localhost, which is not allowed: register the loopback IP literal ` +
      'http://127.0.0.1/… or http://[::1]/… instead; any port is then accepted at sign-in (RFC 8252 §7.3, §8.3)'
    );
  }
  return `redirect URI "${uri}" must use https (http is allowed only as http://127.0.0.1[:port]/… or http://[::1][:port]/…, RFC 8252 §7.3)`;
}
