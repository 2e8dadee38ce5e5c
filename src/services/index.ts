import type { Deps } from './deps';
import type { Notifications } from '../db/notifications';
import { createAccessTokenCache } from './access-token-cache';
import { accessTokenCacheGauges } from './metrics';
import { createPlatforms } from './platforms.service';
import { createSigningKeys } from './signing-keys.service';
import { createUsers } from './users.service';
import { createMaintenance } from './maintenance.service';
import { createClientAuth } from './client-auth.service';
import { createTokenIssuer } from './grants/issue-tokens';
import { createTokenSigner } from './token-signer';
import { createAuthorizationCodeGrant } from './grants/authorization-code.grant';
import { createRefreshTokenGrant } from './grants/refresh-token.grant';
import { createClientCredentialsGrant } from './grants/client-credentials.grant';
import { createTokenExchangeGrant } from './grants/token-exchange.grant';
import { createTokens } from './tokens.service';
import { createRequestValidation } from './authorize/validate-request';
import { createAuthorizationGrant } from './authorize/authorization-grant.service';
import { createDecide } from './interaction/decide';
import { createInteractionFlow } from './interaction/transitions';
import { createPasswordSignIn, createPasswordSignUp } from './interaction/sign-in';
import { createAccountServices } from './account';
import { createLogout } from './logout.service';
import { createBackchannelLogout } from './backchannel-logout.service';
import { createFrontchannelLogout } from './frontchannel-logout.service';
import { createAttemptThrottle } from './attempt-throttle.service';
import { createRateLimitCounters } from './rate-limit-counters.service';
import { createMailOutbox } from './mail-outbox.service';
import { createMasterKey } from './master-key.service';
import { createMfa } from './mfa';
import { createPasskeys } from './mfa/passkeys.service';
import { createAudit } from './audit.service';
import { createDynamicRegistration } from './registration/dynamic-registration.service';
import { createOperators } from './admin/operators.service';
import { createAdminServices } from './admin';
import { createUpstreamProviders } from './federation/providers.service';
import { createUpstreamClient } from './federation/upstream-client';
import { createIdentities } from './federation/identities.service';
import { createResources } from './resources.service';
import { createClientMetadataDocuments } from './client-metadata-documents.service';
import { createClientJwks } from './client-assertion/client-jwks';
import { createClientAssertions } from './client-assertion/client-assertion.service';
import { createDeviceCodeGrant } from './grants/device-code.grant';
import { createDeviceAuthorizations } from './device/device-authorization.service';

/** The service layer as one plain object; the app, the CLI and the tests build the same one. */
export function createServices(deps: Deps, notifications?: Notifications) {
  const audit = createAudit(deps);
  const signingKeys = createSigningKeys(deps, notifications);
  const platforms = createPlatforms(deps, signingKeys, notifications);
  const users = createUsers(deps);
  const maintenance = createMaintenance(deps);
  const clientMetadataDocuments = createClientMetadataDocuments(deps, audit);
  const clientAssertions = createClientAssertions(deps, createClientJwks(deps, audit));
  const clientAuth = createClientAuth(deps, platforms, clientMetadataDocuments, clientAssertions, notifications);
  const registration = createDynamicRegistration(deps, platforms, clientAuth, audit);
  const tokenSigner = createTokenSigner(signingKeys, platforms);
  const backchannelLogout = createBackchannelLogout(deps, platforms, tokenSigner);
  const issueTokens = createTokenIssuer(deps, tokenSigner, signingKeys);
  const accessTokenCache = createAccessTokenCache(notifications);
  const resources = createResources(deps, notifications);
  accessTokenCacheGauges(deps.metrics.registry, accessTokenCache.stats);
  const tokens = createTokens(deps, signingKeys, platforms, accessTokenCache);
  const grants = {
    exchangeAuthorizationCode: createAuthorizationCodeGrant(deps, issueTokens, resources),
    rotateRefreshToken: createRefreshTokenGrant(deps, issueTokens, accessTokenCache, resources),
    redeemDeviceCode: createDeviceCodeGrant(deps, issueTokens, resources, audit),
    issueClientCredentials: createClientCredentialsGrant(deps, issueTokens, resources),
    exchangeToken: createTokenExchangeGrant(deps, issueTokens, resources, tokens),
  };
  const authorize = {
    ...createRequestValidation(deps, signingKeys, platforms, resources, clientMetadataDocuments),
    ...createAuthorizationGrant(deps, backchannelLogout),
  };
  const throttle = createAttemptThrottle(deps, authorize.checkCredentials);
  const device = createDeviceAuthorizations(deps, audit, authorize.namedResources);
  const mailOutbox = createMailOutbox(deps);
  const account = createAccountServices(deps, mailOutbox, backchannelLogout);
  const signInWithPassword = createPasswordSignIn(throttle);
  const signUpWithPassword = createPasswordSignUp(throttle, users, account.emailVerification);
  const passkeys = createPasskeys(deps);
  const mfa = createMfa(deps);
  const identities = createIdentities(deps, users, throttle, account.emailVerification, account.mail);
  const interaction = createInteractionFlow(
    deps,
    createDecide(deps),
    authorize,
    signInWithPassword,
    signUpWithPassword,
    passkeys,
    mfa,
    identities,
  );
  const logout = createLogout(deps, signingKeys, platforms, backchannelLogout);
  const frontchannelLogout = createFrontchannelLogout(deps);
  const masterKey = createMasterKey(deps);
  const operators = createOperators(deps, platforms, audit);
  const upstreamProviders = createUpstreamProviders(deps);
  const admin = createAdminServices(deps, {
    audit,
    platforms,
    clientAuth,
    users,
    throttle,
    passwordReset: account.passwordReset,
    signingKeys,
    mailOutbox,
    backchannelLogout,
    upstreamProviders,
    resources,
  });
  const mailAdmin = admin.mail; // the console's name for it
  const rateLimitCounters = createRateLimitCounters(deps);
  const federation = {
    providers: upstreamProviders,
    identities,
    client: createUpstreamClient(deps, upstreamProviders),
  };
  // `deps` is for the tests and nothing else: outside src/services/ the guard refuses `.deps`
  // (test/unit/import-guard.test.ts); the app and the CLI pass what they need as arguments.
  return {
    deps,
    tokenSigner,
    audit,
    admin,
    registration,
    masterKey,
    signingKeys,
    platforms,
    users,
    maintenance,
    clientAuth,
    grants,
    tokens,
    authorize,
    interaction,
    signInWithPassword,
    signUpWithPassword,
    throttle,
    account,
    mailOutbox,
    logout,
    frontchannelLogout,
    passkeys,
    mfa,
    operators,
    mailAdmin,
    backchannelLogout,
    federation,
    resources,
    clientMetadataDocuments,
    rateLimitCounters,
    device,
  };
}

export type Services = ReturnType<typeof createServices>;
export type { Deps };
