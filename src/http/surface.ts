/**
 * The two surfaces of the server, told apart by the path alone (docs/decisions.md, "Errors by
 * surface"). The hosted pages are where a person's browser is sent: their errors are the styled
 * error page. Everything else is the API (the OAuth and OpenID endpoints, discovery, the admin API,
 * health, metrics, pictures and any unknown path): every error there is the JSON shape
 * `{error, error_description}`, whatever the request's Accept says.
 */

/** Path prefixes of the hosted pages (each with everything below it). */
const HOSTED_PAGES = [
  '/interaction',
  '/account',
  '/password',
  '/verify-email',
  '/device',
  '/oauth/authorize',
  '/oauth/logout',
  '/admin',
  '/dev',
  '/static',
];
/** The upstream sign-in's callback: a browser route below a platform (its other paths are API). */
const UPSTREAM_CALLBACK = /^\/platforms\/[^/]+\/upstream(\/|$)/;

/** A standard platform's endpoints under its issuer, `/platforms/G/oauth/…` (middleware/issuer-path.ts). */
export const ISSUER_PATH_ENDPOINT = /^\/platforms\/([^/]+)(\/oauth(?:\/.*)?)$/i;

/** The path an endpoint under an issuer stands for (`/platforms/G/oauth/token` → `/oauth/token`): the same surface. */
export const rootFormOf = (path: string): string => ISSUER_PATH_ENDPOINT.exec(path)?.[2] ?? path;

const isUnder = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** Is this path (no query) one of the hosted pages? Case-insensitive, as Express routes. */
export function isHostedPagePath(path: string): boolean {
  const p = rootFormOf(path.toLowerCase());
  if (p === '/') return true;
  if (isUnder(p, '/admin/api')) return false;
  return HOSTED_PAGES.some((prefix) => isUnder(p, prefix)) || UPSTREAM_CALLBACK.test(p);
}

/** The path of a request target: origin-form (`/a?b`) or absolute-form (`http://host/a?b`), without query or fragment. */
export function pathOfTarget(target: string): string {
  const path = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').replace(/[?#][\s\S]*$/, '');
  return path || '/';
}
