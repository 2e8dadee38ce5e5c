import * as identities from '../../repositories/user-identity.repository';
import * as users from '../../repositories/user.repository';
import * as passkeys from '../../repositories/webauthn-credential.repository';
import * as providersRepo from '../../repositories/upstream-provider.repository';
import { newId } from '../../crypto/random';
import type { Queryable } from '../../db';
import type { Platform } from '../../domain/platform';
import type { UpstreamProfile, UpstreamProvider, UserIdentity, UpstreamFailure } from '../../domain/upstream';
import type { User } from '../../domain/user';
import type { Deps } from '../deps';
import type { Users } from '../users.service';
import type { AttemptThrottle } from '../attempt-throttle.service';
import type { EmailVerification } from '../account/email-verification.service';
import type { AccountMail } from '../account/account-mail';
import type { Locale } from '../../domain/locales';
import type { FieldError } from '../user-rules';
import { createSecurityEvents, type SecurityOrigin } from '../security-events';
import { amrOf, type AuthMethod } from '../../domain/mfa';

/** What a verified upstream answer is to this platform. */
export type Resolved =
  /** Its subject is linked: that user signs in (unless disabled). */
  | { kind: 'linked'; user: User; identity: UserIdentity; disabled: boolean }
  /** Not linked, but an account has the same email: linked only after the person proves they own it. */
  | { kind: 'link_required'; user: User; disabled: boolean }
  /** Nobody: the sign-up page, pre-filled. */
  | { kind: 'new' };

/** A linked identity as the account page lists it. */
export interface LinkedIdentity {
  id: string;
  providerName: string;
  providerSlug: string;
  email: string | null;
  createdAt: Date;
  lastUsedAt: Date;
}

export type UnlinkResult = { ok: true; providerName: string } | { ok: false; reason: 'not_found' | 'last_way_in' };

/** What the upstream proved, as kept while a page (link or sign-up) is between it and the sign-in. */
export type VerifiedUpstream = Pick<UpstreamProfile, 'providerId' | 'subject' | 'email'> & {
  sealedTokens: string | null;
};

export interface UpstreamSignUpInput {
  email: string;
  emailVerified: boolean;
  password: string | null;
  givenName: string;
  familyName: string;
  birthdate: string;
  phoneNumber: string;
}

/**
 * The links between local users and upstream identities (`user_identities`): who a
 * verified upstream answer is, linking (only after proof, by the callers in
 * src/services/interaction/upstream.ts), sign-up through an upstream, the account page's list and
 * unlink (never the last way in). Every change is audited in its own transaction.
 */
export function createIdentities(
  deps: Deps,
  usersService: Users,
  throttle: AttemptThrottle,
  emailVerification: EmailVerification,
  mail: AccountMail,
) {
  const events = createSecurityEvents(deps);
  /** Sealed only when the provider keeps the upstream's tokens (never in clear, never otherwise). */
  const sealTokens = (provider: UpstreamProvider, profile: UpstreamProfile): string | null =>
    provider.storeTokens && profile.tokens ? deps.sealer.seal(JSON.stringify(profile.tokens)) : null;

  /** The amr of an upstream sign-in: `fed`, plus `mfa` when a provider trusted for it says the upstream used two factors. */
  function amrFor(provider: UpstreamProvider, profile: UpstreamProfile): string[] {
    const upstream = profile.amr ?? [];
    const twoFactors =
      upstream.includes('mfa') || amrOf(upstream.filter((m) => m !== 'mfa') as AuthMethod[]).includes('mfa');
    return provider.trustMfa && twoFactors ? ['fed', 'mfa'] : ['fed'];
  }

  async function linkIn(
    q: Queryable,
    user: Pick<User, 'id' | 'platformId'>,
    provider: Pick<UpstreamProvider, 'id' | 'slug'>,
    verified: VerifiedUpstream,
    origin?: SecurityOrigin,
  ): Promise<UserIdentity | undefined> {
    const linked = await identities.insertUnlessLinked(
      q,
      {
        id: newId(),
        platformId: user.platformId,
        userId: user.id,
        providerId: provider.id,
        subject: verified.subject,
        email: verified.email,
        sealedTokens: verified.sealedTokens,
      },
      deps.now(),
    );
    if (linked && origin)
      await events.record(q, origin, 'identity.linked', user.id, { provider: provider.slug, email: verified.email });
    return linked;
  }

  return {
    amrFor,
    sealTokens,

    async resolve(platformId: string, profile: UpstreamProfile): Promise<Resolved> {
      const identity = await identities.findByProviderSubject(deps.db, profile.providerId, profile.subject);
      if (identity) {
        const row = await users.findById(deps.db, platformId, identity.userId);
        if (row) {
          const { passwordHash: _h, disabledAt, ...user } = row;
          return { kind: 'linked', user, identity, disabled: disabledAt !== null };
        }
      }
      const byEmail = profile.email ? await users.findByEmail(deps.db, platformId, profile.email) : undefined;
      if (byEmail) {
        const { passwordHash: _h, disabledAt, ...user } = byEmail;
        return { kind: 'link_required', user, disabled: disabledAt !== null };
      }
      return { kind: 'new' };
    },

    /** A sign-in through a linked identity: the email it gave now, the tokens when kept; audited. */
    async signedIn(
      identity: UserIdentity,
      provider: UpstreamProvider,
      profile: UpstreamProfile,
      amr: string[],
      origin?: SecurityOrigin,
    ): Promise<void> {
      await deps.db.transaction(async (trx) => {
        await identities.touch(
          trx,
          identity.id,
          { email: profile.email, sealedTokens: provider.storeTokens ? sealTokens(provider, profile) : undefined },
          deps.now(),
        );
        if (origin)
          await events.record(trx, origin, 'sign_in.succeeded', identity.userId, {
            method: 'upstream',
            provider: provider.slug,
            amr,
          });
      });
    },

    /** After proof of the account (password, passkey, mailed link): links; undefined when already linked elsewhere. */
    async link(
      user: Pick<User, 'id' | 'platformId'>,
      provider: Pick<UpstreamProvider, 'id' | 'slug'>,
      verified: VerifiedUpstream,
      origin?: SecurityOrigin,
    ): Promise<UserIdentity | undefined> {
      return deps.db.transaction(async (trx) => {
        const linked = await linkIn(trx, user, provider, verified, origin);
        if (linked && origin)
          await events.record(trx, origin, 'sign_in.succeeded', user.id, {
            method: 'upstream',
            provider: provider.slug,
          });
        return linked;
      });
    },

    /**
     * A new user from an upstream sign-up (throttled like a sign-up): created with its identity and
     * `sign_up`/`identity.linked` in one transaction. Without a trusted, verified email the usual
     * verification mail goes out.
     */
    async signUp(
      platform: Platform,
      provider: Pick<UpstreamProvider, 'id' | 'slug'>,
      verified: VerifiedUpstream,
      input: UpstreamSignUpInput,
      source: string,
      origin?: SecurityOrigin,
      locale?: Locale,
    ): Promise<
      { ok: true; user: User } | { ok: false; errors: FieldError[]; lockedSeconds?: number; alreadyLinked?: true }
    > {
      let alreadyLinked = false;
      const result = await throttle.attemptSignUp(platform.id, source, () =>
        usersService
          .createUser(platform.id, { ...input }, async (trx, user) => {
            if (!(await linkIn(trx, user, provider, verified, origin))) {
              alreadyLinked = true; // a second tab finished first: nothing is created
              throw new IdentityTaken();
            }
            if (origin)
              await events.record(trx, origin, 'sign_up', user.id, { method: 'upstream', provider: provider.slug });
          })
          .catch((err) => {
            if (err instanceof IdentityTaken) return { ok: false as const, errors: [] };
            throw err;
          }),
      );
      if (!result.ok)
        return 'lockedSeconds' in result
          ? { ok: false, errors: [], lockedSeconds: result.lockedSeconds }
          : { ok: false, errors: result.errors, ...(alreadyLinked ? { alreadyLinked: true as const } : {}) };
      if (!result.user.emailVerified) await emailVerification.sendAfterSignUp(platform, result.user, locale);
      return { ok: true, user: result.user };
    },

    /** "Email me a link" of the link page: the mail through the outbox (the link's secret is the browser session's). */
    async mailLink(
      platform: Platform,
      user: User,
      providerName: string,
      url: string,
      ttlMinutes: number,
      locale?: Locale,
    ): Promise<void> {
      await deps.db.transaction((trx) => mail.linkAccount(trx, platform, user, providerName, url, ttlMinutes, locale));
    },

    /** A failed upstream sign-in, for the audit log (the page names the provider; the log says why). */
    async failed(
      origin: SecurityOrigin,
      providerSlug: string | null,
      reason: UpstreamFailure | 'disabled' | 'other_account' | 'not_linked' | 'already_linked',
      userId: string | null = null,
    ): Promise<void> {
      await events.record(deps.db, origin, 'sign_in.failed', userId, {
        method: 'upstream',
        provider: providerSlug,
        reason,
      });
    },

    /** The account page's "Linked accounts". */
    async list(platformId: string, userId: string): Promise<LinkedIdentity[]> {
      const [rows, providers] = await Promise.all([
        identities.listByUser(deps.db, platformId, userId),
        providersRepo.listByPlatform(deps.db, platformId),
      ]);
      return rows.map((r) => {
        const p = providers.find((x) => x.id === r.providerId);
        return {
          id: r.id,
          providerName: p?.displayName ?? 'Removed provider',
          providerSlug: p?.slug ?? '',
          email: r.email,
          createdAt: r.createdAt,
          lastUsedAt: r.lastUsedAt,
        };
      });
    },

    /** Whether the user has a password (the account page offers "Set a password" otherwise). */
    async hasPassword(platformId: string, userId: string): Promise<boolean> {
      return Boolean((await users.findById(deps.db, platformId, userId))?.passwordHash);
    },

    /**
     * Unlinks, unless it is the last way in: no password, no passkey and no other identity through an
     * enabled provider (a disabled provider signs nobody in: docs/decisions.md).
     */
    async unlink(
      user: Pick<User, 'id' | 'platformId'>,
      identityId: string,
      origin?: SecurityOrigin,
    ): Promise<UnlinkResult> {
      return deps.db.transaction(async (trx) => {
        const mine = await identities.listByUser(trx, user.platformId, user.id);
        const identity = mine.find((i) => i.id === identityId);
        if (!identity) return { ok: false as const, reason: 'not_found' as const };
        const row = await users.findById(trx, user.platformId, user.id);
        const enabled = new Set(
          (await providersRepo.listByPlatform(trx, user.platformId, { enabledOnly: true })).map((p) => p.id),
        );
        const otherIdentity = mine.some((i) => i.id !== identity.id && enabled.has(i.providerId));
        const otherWays =
          Boolean(row?.passwordHash) ||
          (await passkeys.countByUser(trx, user.platformId, user.id)) > 0 ||
          otherIdentity;
        if (!otherWays) return { ok: false as const, reason: 'last_way_in' as const };
        await identities.remove(trx, user.platformId, user.id, identity.id);
        const provider = await providersRepo.findById(trx, user.platformId, identity.providerId);
        if (origin)
          await events.record(trx, origin, 'identity.unlinked', user.id, {
            provider: provider?.slug ?? null,
            email: identity.email,
          });
        return { ok: true as const, providerName: provider?.displayName ?? 'that provider' };
      });
    },
  };
}

class IdentityTaken extends Error {}

export type Identities = ReturnType<typeof createIdentities>;
