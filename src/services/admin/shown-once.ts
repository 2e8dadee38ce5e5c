import type { Deps } from '../deps';

/**
 * A credential the console shows once (a new client secret, a registration token): sealed into the
 * console session across the redirect after the change, unsealed by the page's next render, which
 * drops it. Sealed, so a session store never holds it in clear.
 */
export function createShownOnce(deps: Pick<Deps, 'sealer'>) {
  return {
    seal: (value: string): string => deps.sealer.seal(value),
    unseal: (sealed: string): string => deps.sealer.unseal(sealed).toString('utf8'),
  };
}

export type ShownOnce = ReturnType<typeof createShownOnce>;
