import { randomInt } from 'node:crypto';
import { digest } from '../../crypto/digest';
import { newId, randomToken } from '../../crypto/random';
import { OAuthError } from '../../errors';
import * as devices from '../../repositories/device-authorization.repository';
import * as clients from '../../repositories/client.repository';
import type { AuditContext } from '../../domain/audit';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import { DEVICE_CODE_GRANT, type Client } from '../../domain/client';
import {
  USER_CODE_ALPHABET,
  USER_CODE_LENGTH,
  formatUserCode,
  normalizeUserCode,
  type DeviceAuthorization,
  type IssuedDeviceAuthorization,
} from '../../domain/device-authorization';
import { acrOf, amrOf, amrToText, type AuthMethod } from '../../domain/mfa';
import type { Platform } from '../../domain/platform';
import type { User } from '../../domain/user';
import type { Audit } from '../audit.service';
import type { Deps } from '../deps';
import type { Resource } from '../../domain/resource';
import { scopesOfRequest } from '../authorize/request-scopes';
import { formatScope } from '../scopes';
import { createUserCodeThrottle } from './user-code-throttle';

/** What the device endpoint's client asked for (RFC 8628 §3.1): OIDC and resource scopes, RFC 8707 resources. */
export interface DeviceAuthorizationInput {
  scope?: string;
  resource?: string[];
}

/** The typed user code, as the hosted page finds it (or why not). */
export type UserCodeCheck =
  | { ok: true; authorization: DeviceAuthorization; client: Client; userCode: string }
  | { ok: false; reason: 'malformed' | 'unknown' | 'expired' | 'used'; lockedSeconds: number }
  | { ok: false; reason: 'locked'; lockedSeconds: number };

/** How the person's answer landed: recorded, or too late (expired) or already given (used). */
export type DeviceDecisionOutcome = 'recorded' | 'expired' | 'used';

const USER_CODE_TRIES = 5;
const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23505';

/** A user code: 8 letters of the alphabet, each drawn uniformly (RFC 8628 §6.1). */
function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/**
 * The device side of RFC 8628 before the token endpoint: the device authorization request, the
 * hosted page's look-up of a user code (throttled), and the person's approval or denial at the end
 * of the interaction it starts (docs/decisions.md, "Machine and device clients").
 */
export function createDeviceAuthorizations(
  deps: Deps,
  audit: Audit,
  namedResources: (platform: Platform, resource: string[]) => Promise<Resource[]>,
) {
  const throttle = createUserCodeThrottle(deps);

  return {
    /**
     * RFC 8628 §3.1–3.2 for an authenticated client of a standard platform that holds the device
     * grant; scope and resources as at the authorize endpoint (narrowed, invalid_target,
     * invalid_scope). Codes are stored as digests. Throws not_found, unauthorized_client,
     * invalid_request, invalid_scope, invalid_target.
     */
    async requestDeviceAuthorization(
      ctx: { platform: Platform; client: Client; audit: AuditContext },
      input: DeviceAuthorizationInput,
    ): Promise<IssuedDeviceAuthorization> {
      const { platform, client } = ctx;
      if (platform.signingProfile !== 'standard')
        throw new OAuthError('not_found', 'This platform has no device authorization endpoint');
      if (!client.grantTypes.includes(DEVICE_CODE_GRANT))
        throw new OAuthError('unauthorized_client', `this client is not allowed the ${DEVICE_CODE_GRANT} grant`);
      const named = await namedResources(platform, input.resource ?? []);
      const { scopes, resources } = scopesOfRequest(platform, client, input.scope, named);
      const now = deps.now();
      const deviceCode = randomToken(32);
      const { deviceCodeTtlSeconds: ttl, deviceCodeIntervalSeconds: interval } = deps.config;
      for (let attempt = 1; ; attempt++) {
        const userCode = newUserCode();
        try {
          await deps.db.transaction(async (trx) => {
            await devices.insert(trx, {
              id: newId(),
              deviceCodeHash: digest(deviceCode),
              userCodeHash: digest(userCode),
              platformId: platform.id,
              clientId: client.id,
              scope: formatScope(scopes),
              resources,
              expiresAt: new Date(now.getTime() + ttl * 1000),
              intervalSeconds: interval,
              createdAt: now,
            });
            await audit.record(trx, ctx.audit, {
              kind: 'device_authorization.requested',
              platformId: platform.id,
              clientId: client.id,
              details: { scope: formatScope(scopes), resources: resources.map((r) => r.uri) },
            });
          });
          return { deviceCode, userCode, expiresInSeconds: ttl, intervalSeconds: interval };
        } catch (err) {
          // A user code another live authorization holds (unique over every platform): draw again.
          if (!isUniqueViolation(err) || attempt >= USER_CODE_TRIES) throw err;
        }
      }
    },

    /**
     * The hosted page's look-up of a typed code (any case, with or without the dash). Wrong codes
     * count against the source and the typed code (RFC 8628 §5.1); while either is locked no code
     * is looked up. A malformed code is a typo, not a guess: not counted.
     */
    async checkUserCode(typed: string, source: string): Promise<UserCodeCheck> {
      const code = normalizeUserCode(typed);
      const locked = await throttle.lockedFor(source, code);
      if (locked) return { ok: false, reason: 'locked', lockedSeconds: locked };
      if (!code) return { ok: false, reason: 'malformed', lockedSeconds: 0 };
      const found = await devices.findByUserCodeHash(deps.db, digest(code));
      if (!found) return { ok: false, reason: 'unknown', lockedSeconds: await throttle.countFailure(source, code) };
      if (found.status !== 'pending') return { ok: false, reason: 'used', lockedSeconds: 0 };
      if (found.expiresAt <= deps.now()) return { ok: false, reason: 'expired', lockedSeconds: 0 };
      const client = await clients.findById(deps.db, found.platformId, found.clientId);
      if (!client) return { ok: false, reason: 'unknown', lockedSeconds: 0 };
      return { ok: true, authorization: found, client, userCode: code };
    },

    /**
     * The interaction that signs the person in and asks their consent for the device: an
     * authorization request with no redirect (its end is approve or deny below), `redirectUri` the
     * device page itself, and no prompt: the chooser and every factor as usual. Consent is always
     * asked (RFC 8628 §5.4, src/services/interaction/decide.ts).
     */
    interactionFor(found: {
      authorization: DeviceAuthorization;
      client: Client;
      userCode: string;
    }): AuthorizationRequest {
      const { authorization: a, client } = found;
      return {
        id: newId(),
        platformId: a.platformId,
        clientId: client.id,
        clientName: client.name,
        redirectUri: `${deps.config.baseUrl}/device`,
        scopes: a.scope ? a.scope.split(' ') : [],
        ...(a.resources.length ? { resources: a.resources } : {}),
        prompts: [],
        prefill: {},
        device: { authorizationId: a.id, userCode: formatUserCode(found.userCode) },
        createdAt: Math.floor(deps.now().getTime() / 1000),
      };
    },

    /** The person approved (RFC 8628 §3.3): the device's next poll gets tokens for `user`. Audited. */
    async approve(
      ar: AuthorizationRequest,
      user: Pick<User, 'id'>,
      authTime: number,
      methods: string[],
      ctx: AuditContext,
    ): Promise<DeviceDecisionOutcome> {
      const amr = amrOf(methods as AuthMethod[]);
      return decide(ar, user.id, ctx, {
        status: 'approved',
        userId: user.id,
        authTime: new Date(authTime * 1000),
        amr: amrToText(amr),
        acr: acrOf(amr),
      });
    },

    /** The person denied: the device's next poll gets access_denied. Audited. */
    async deny(ar: AuthorizationRequest, userId: string | null, ctx: AuditContext): Promise<DeviceDecisionOutcome> {
      return decide(ar, userId, ctx, { status: 'denied', userId });
    },
  };

  /**
   * Records the person's answer once, with its audit event, in one transaction. Nothing changes for
   * a code no longer pending: already answered (another tab) is `used`; past its expiry, or gone
   * (purged, its client deleted), is `expired`.
   */
  async function decide(
    ar: AuthorizationRequest,
    userId: string | null,
    ctx: AuditContext,
    decision: devices.DeviceDecision,
  ): Promise<DeviceDecisionOutcome> {
    const id = ar.device!.authorizationId;
    return deps.db.transaction(async (trx) => {
      const now = deps.now();
      const changed = await devices.decide(trx, id, decision, now);
      if (!changed) {
        const current = await devices.findById(trx, id);
        return current && current.status !== 'pending' ? 'used' : 'expired';
      }
      await audit.record(trx, ctx.actorType === 'user' ? { ...ctx, actorId: userId } : ctx, {
        kind: decision.status === 'approved' ? 'device_authorization.approved' : 'device_authorization.denied',
        platformId: ar.platformId,
        subject: userId,
        clientId: ar.clientId,
        details: { scope: formatScope(ar.scopes) },
      });
      return 'recorded';
    });
  }
}

export type DeviceAuthorizations = ReturnType<typeof createDeviceAuthorizations>;
