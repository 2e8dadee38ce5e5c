import { RESOURCES_PER_REQUEST_MAX, resourceUriProblem } from '../../domain/resource';
import type { Platform } from '../../domain/platform';
import { invalidRequest, invalidTarget } from '../../errors';
import type { TokenTarget } from '../../repositories/grant-statements.repository';
import type { Deps } from '../deps';
import type { Resources } from '../resources.service';

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * The RFC 8707 §2.2 `resource` of a token request on a standard platform, checked as far as it can
 * be before the grant is read: each an absolute URI without fragment, registered on the platform
 * (else invalid_target). Whether the grant named it is the grant statement's check. A seed
 * platform ignores `resource`, as before resources existed.
 */
export function createTokenTargets(deps: Deps, resources: Resources) {
  return async function tokenTarget(
    platform: Platform,
    resource: string[] | undefined,
    now: Date,
  ): Promise<TokenTarget> {
    if (platform.signingProfile !== 'standard') return { requested: null, registered: [] };
    if ((resource?.length ?? 0) > RESOURCES_PER_REQUEST_MAX)
      throw invalidRequest(`at most ${RESOURCES_PER_REQUEST_MAX} "resource" parameters`);
    for (const uri of resource ?? []) {
      const problem = resourceUriProblem(uri);
      if (problem) throw invalidTarget(`resource "${uri.slice(0, 200)}" ${problem}`);
      if (!(await resources.findByUri(platform.id, uri)))
        throw invalidTarget(`resource "${uri}" is not a resource of this platform`);
    }
    const registered = (await resources.listForPlatform(platform.id)).map((r) => ({
      uri: r.uri,
      accessExpiresAt: new Date((seconds(now) + (r.accessTokenTtlSeconds ?? deps.config.accessTokenTtlSeconds)) * 1000),
    }));
    return { requested: resource?.length ? [...new Set(resource)] : null, registered };
  };
}

/** The access token's `aud` for an audience of resources: the client (undefined) when none, the URI when one, the list when several. */
export const audienceOf = (audience: readonly string[]): string | string[] | undefined =>
  audience.length === 0 ? undefined : audience.length === 1 ? audience[0] : [...audience];
