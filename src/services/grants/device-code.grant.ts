import { digest } from '../../crypto/digest';
import { OAuthError, invalidGrant, invalidTarget } from '../../errors';
import * as devices from '../../repositories/device-authorization.repository';
import { SLOW_DOWN_STEP_SECONDS } from '../../domain/device-authorization';
import type { Audit } from '../audit.service';
import type { Deps } from '../deps';
import type { Resources } from '../resources.service';
import type { ClientCtx } from './authorization-code.grant';
import { accessTokenJti, type TokenIssuer } from './issue-tokens';
import { audienceOf, createTokenTargets } from './token-target';

export interface DeviceCodeInput {
  device_code: string;
  /** RFC 8707 §2.2 resource indicators (standard platforms): among those the device authorization named. */
  resource?: string[];
}

/**
 * The token endpoint's `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4–3.5): while
 * the person has not answered, authorization_pending (slow_down when polled sooner than the
 * interval, which then grows by 5 s); access_denied after a denial; expired_token once the code's
 * lifetime is over; tokens once, as the code grant issues them, when approved. The device code is
 * bound to the client that asked and spent by its redemption: a second one is invalid_grant.
 * Throws authorization_pending, slow_down, access_denied, expired_token, invalid_grant, invalid_target.
 */
export function createDeviceCodeGrant(deps: Deps, issuer: TokenIssuer, resources: Resources, audit: Audit) {
  const tokenTarget = createTokenTargets(deps, resources);
  return async function redeemDeviceCode(ctx: ClientCtx, input: DeviceCodeInput) {
    await issuer.loadKeys(ctx.platform, ctx.client);
    const prepared = issuer.prepare();
    const target = await tokenTarget(ctx.platform, input.resource, prepared.now);
    const row = await devices.redeemDeviceCode(deps.db, {
      platformId: ctx.platform.id,
      deviceCodeHash: digest(input.device_code),
      clientId: ctx.client.id,
      slowDownSeconds: SLOW_DOWN_STEP_SECONDS,
      target,
      tokens: prepared,
    });
    // Another client's device code tells that client nothing (RFC 8628 §3.4 binds it to its client).
    if (!row || row.clientId !== ctx.client.id) throw invalidGrant('The device code is invalid');
    if (!row.redeemed) {
      if (row.status === 'consumed') throw invalidGrant('The device code has already been used');
      if (row.expiresAt <= prepared.now)
        throw new OAuthError('expired_token', 'The device code has expired; start the device authorization again');
      if (row.status === 'denied') throw new OAuthError('access_denied', 'The user denied the request');
      if (row.status === 'pending') {
        if (row.tooFast)
          throw new OAuthError(
            'slow_down',
            `Polling too fast: wait at least ${row.intervalSeconds} seconds between requests`,
          );
        throw new OAuthError('authorization_pending', 'The user has not answered yet');
      }
      // Approved, but the audience is not the request's: the code stays unspent, as a code's does.
      if (!row.targetOk)
        throw invalidTarget('The resource was not named in the device authorization, or is no longer registered');
      throw invalidGrant('The device code is invalid');
    }
    if (!row.user) throw invalidGrant('The user no longer exists');
    deps.metrics.tokensIssued.inc({ grant: 'device_code' });
    if (ctx.audit)
      await audit.record(deps.db, ctx.audit, {
        kind: 'device_authorization.token_issued',
        platformId: ctx.platform.id,
        subject: row.user.id,
        clientId: ctx.client.id,
        details: { scope: row.scope, refresh_token: row.hasRefreshToken },
      });
    return issuer.sign(
      { ...prepared, accessExpiresAt: row.accessExpiresAt ?? prepared.accessExpiresAt },
      {
        jti: accessTokenJti(
          prepared,
          row.hasRefreshToken ? { kind: 'family', id: prepared.familyId } : { kind: 'device', id: row.id },
        ),
        platform: ctx.platform,
        client: ctx.client,
        user: row.user,
        scope: row.scope,
        audience: audienceOf(row.audience),
        authTime: row.authTime ?? prepared.now,
        amr: row.amr,
        acr: row.acr,
        hasRefreshToken: row.hasRefreshToken,
      },
    );
  };
}
