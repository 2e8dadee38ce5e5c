import { invalidRequest } from '../errors';
import type { Services } from '../services';
import type { ClientType } from '../domain/client';
import type { ThrottleEntry } from '../services/attempt-throttle.service';
import { MAIL_STATUSES, type MailStatus } from '../repositories/mail-outbox.repository';
import { presentMail } from '../presenters/mail.presenter';
import { parseFlags } from './args';
import { isMfaPolicy, MFA_POLICIES } from '../domain/mfa';

type Flags = ReturnType<typeof parseFlags>['flags'];

function one(flags: Flags, name: string, required: true): string;
function one(flags: Flags, name: string, required?: false): string | undefined;
function one(flags: Flags, name: string, required = false): string | undefined {
  const values = flags.get(name);
  if (!values) {
    if (required) throw invalidRequest(`--${name} is required`);
    return undefined;
  }
  if (values.length > 1) throw invalidRequest(`--${name} may be given once`);
  if (values[0] === true) throw invalidRequest(`--${name} needs a value`);
  return values[0];
}

function many(flags: Flags, name: string): string[] {
  return (flags.get(name) ?? []).map((v) => {
    if (v === true) throw invalidRequest(`--${name} needs a value`);
    return v;
  });
}

/** A flag without a value, e.g. `--locked`. */
function switchFlag(flags: Flags, name: string): boolean {
  const values = flags.get(name);
  if (!values) return false;
  if (values.length > 1 || values[0] !== true) throw invalidRequest(`--${name} takes no value`);
  return true;
}

/** Sign-in and sign-up throttle keys as operators read them (snake_case, seconds). */
const presentThrottle = (e: ThrottleEntry) => ({
  kind: e.kind,
  platform_guid: e.platformId,
  email_sha256: e.emailSha256,
  source: e.source,
  failures: e.failures,
  locks: e.locks,
  locked_until: e.lockedUntil?.toISOString() ?? null,
  locked_seconds: e.lockedSeconds,
});

function checkKnown(flags: Flags, allowed: string[]) {
  for (const name of flags.keys()) if (!allowed.includes(name)) throw invalidRequest(`unknown option --${name}`);
}

export const USAGE = `Usage:
  admin platform create --name NAME
  admin platform rate-limit --platform G --endpoint NAME --per-minute N|default
  admin platform mfa --platform G --policy off|optional|required   (second factor: never, for enrolled users, for everyone)
  admin user reset-mfa --platform G --email E   (removes the user's authenticator app, recovery codes and passkeys)
  admin client create --platform G --name NAME --type confidential|public --redirect-uri URI [--redirect-uri URI ...]
                      --scopes "openid profile email phone address offline_access" [--post-logout-redirect-uri URI ...]
                      [--resource-server]   (confidential only: may introspect other clients' tokens)
  admin user create --platform G --email E --password P --given-name A --family-name B --birthdate YYYY-MM-DD
                    [--phone +E164] [--email-verified] [--preferred-username NAME]
  admin key rotate --platform G
  admin master-key reseal          (reseal every secret under MASTER_KEY; MASTER_KEY_PREVIOUS opens the old ones)
  admin throttle list [--platform G] [--email E] [--source IP] [--locked]
  admin throttle clear --platform G (--email E | --source IP | --all)
  admin mail list [--status queued|sending|sent|dead] [--platform G] [--limit N]
  admin mail retry (--id ID | --all-dead [--platform G])
  admin backup --out FILE          (one consistent snapshot, also while the provider runs; keep MASTER_KEY, apart)
  admin restore --in FILE          (into an empty database: a fresh DATA_DIR with the provider stopped, or an empty Postgres)`;

/** Runs one admin command over the service layer; returns the JSON object to print. */
export async function runCommand(s: Services, argv: string[]): Promise<Record<string, unknown>> {
  const { positionals, flags } = parseFlags(argv);
  const command = positionals.join(' ');
  switch (command) {
    case 'platform create': {
      checkKnown(flags, ['name']);
      const { platform, kid } = await s.platforms.createPlatform(one(flags, 'name', true));
      return { platform_guid: platform.id, name: platform.name, kid };
    }
    case 'platform rate-limit': {
      checkKnown(flags, ['platform', 'endpoint', 'per-minute']);
      const endpoint = one(flags, 'endpoint', true);
      const raw = one(flags, 'per-minute', true);
      const perMinute = raw === 'default' ? null : Number(raw);
      if (perMinute !== null && (!Number.isInteger(perMinute) || perMinute < 1)) throw invalidRequest('--per-minute must be a positive integer or "default"');
      const overrides = await s.platforms.setRateLimit(one(flags, 'platform', true), endpoint, perMinute);
      return { platform_guid: one(flags, 'platform', true), rate_limits: overrides };
    }
    case 'platform mfa': {
      checkKnown(flags, ['platform', 'policy']);
      const platformId = one(flags, 'platform', true);
      const policy = one(flags, 'policy', true);
      if (!isMfaPolicy(policy)) throw invalidRequest(`--policy must be one of ${MFA_POLICIES.join(', ')}`);
      await s.platforms.requirePlatform(platformId);
      await s.mfa.setPolicy(platformId, policy);
      return { platform_guid: platformId, mfa: policy };
    }
    case 'user reset-mfa': {
      checkKnown(flags, ['platform', 'email']);
      const platformId = one(flags, 'platform', true);
      await s.platforms.requirePlatform(platformId);
      const user = await s.users.findByEmail(platformId, one(flags, 'email', true));
      if (!user) throw invalidRequest('no user with that email on this platform');
      const had = (await s.mfa.totp.status(user.id)).enrolled;
      await s.mfa.removeTotp(user.id);
      const passkeysRemoved = await s.passkeys.removeAll(platformId, user.id);
      return { platform_guid: platformId, sub: user.id, email: user.email, totp_removed: had, passkeys_removed: passkeysRemoved };
    }
    case 'client create': {
      checkKnown(flags, ['platform', 'name', 'type', 'redirect-uri', 'scopes', 'post-logout-redirect-uri', 'resource-server']);
      const resourceServer = flags.get('resource-server');
      if (resourceServer && (resourceServer.length > 1 || resourceServer[0] !== true)) throw invalidRequest('--resource-server takes no value');
      const { client, secret } = await s.platforms.createClient(one(flags, 'platform', true), {
        name: one(flags, 'name', true),
        type: one(flags, 'type', true) as ClientType,
        redirectUris: many(flags, 'redirect-uri'),
        postLogoutRedirectUris: many(flags, 'post-logout-redirect-uri'),
        scopes: one(flags, 'scopes', true),
        isResourceServer: Boolean(resourceServer),
      });
      return {
        client_id: client.id,
        client_secret: secret,
        platform_guid: client.platformId,
        name: client.name,
        type: client.type,
        redirect_uris: client.redirectUris,
        post_logout_redirect_uris: client.postLogoutRedirectUris,
        scopes: client.allowedScopes.join(' '),
        is_resource_server: client.isResourceServer,
      };
    }
    case 'user create': {
      checkKnown(flags, ['platform', 'email', 'password', 'given-name', 'family-name', 'birthdate', 'phone', 'email-verified', 'preferred-username']);
      const platformId = one(flags, 'platform', true);
      await s.platforms.requirePlatform(platformId);
      const verified = flags.get('email-verified');
      if (verified && (verified.length > 1 || verified[0] !== true)) throw invalidRequest('--email-verified takes no value');
      const result = await s.users.createUser(platformId, {
        email: one(flags, 'email', true),
        password: one(flags, 'password', true),
        givenName: one(flags, 'given-name', true),
        familyName: one(flags, 'family-name', true),
        birthdate: one(flags, 'birthdate', true),
        phoneNumber: one(flags, 'phone'),
        preferredUsername: one(flags, 'preferred-username'), // absent: derived from the name
        emailVerified: Boolean(verified),
      });
      if (!result.ok) throw invalidRequest(result.errors.map((e) => `${e.field}: ${e.message}`).join('; '));
      return { sub: result.user.id, email: result.user.email, preferred_username: result.user.preferredUsername };
    }
    case 'throttle list':
    case 'throttle clear': {
      checkKnown(flags, ['platform', 'email', 'source', 'locked', 'all']);
      const filter = { platformId: command === 'throttle clear' ? one(flags, 'platform', true) : one(flags, 'platform'), email: one(flags, 'email'), source: one(flags, 'source') };
      if (filter.platformId !== undefined) await s.platforms.requirePlatform(filter.platformId);
      if (command === 'throttle list') {
        const entries = await s.throttle.listThrottles({ ...filter, lockedOnly: switchFlag(flags, 'locked') });
        return { throttles: entries.map(presentThrottle) };
      }
      if (!filter.email && !filter.source && !switchFlag(flags, 'all')) throw invalidRequest('throttle clear needs --email, --source or --all');
      return { platform_guid: filter.platformId, cleared: await s.throttle.clearThrottles({ ...filter, platformId: filter.platformId! }) };
    }
    case 'mail list': {
      checkKnown(flags, ['status', 'platform', 'limit']);
      const status = one(flags, 'status');
      if (status !== undefined && !MAIL_STATUSES.includes(status as MailStatus)) throw invalidRequest(`--status must be one of ${MAIL_STATUSES.join(', ')}`);
      const platformId = one(flags, 'platform');
      if (platformId !== undefined) await s.platforms.requirePlatform(platformId);
      const limit = Number(one(flags, 'limit') ?? 50);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidRequest('--limit must be an integer from 1 to 1000');
      const { mails, counts } = await s.mailOutbox.list({ status: status as MailStatus | undefined, platformId }, limit);
      return { counts, mails: mails.map(presentMail) };
    }
    case 'mail retry': {
      checkKnown(flags, ['id', 'all-dead', 'platform']);
      const id = one(flags, 'id');
      const allDead = switchFlag(flags, 'all-dead');
      const platformId = one(flags, 'platform');
      if (Boolean(id) === allDead) throw invalidRequest('mail retry needs --id ID or --all-dead');
      if (platformId !== undefined) await s.platforms.requirePlatform(platformId);
      const rows = await s.mailOutbox.retry(id ? { id } : { allDead: true, platformId });
      return { requeued: rows.length, mails: rows.map(presentMail) };
    }
    case 'master-key reseal': {
      checkKnown(flags, []);
      return { resealed: await s.masterKey.resealAll() };
    }
    case 'key rotate': {
      checkKnown(flags, ['platform']);
      return { kid: await s.platforms.rotateKey(one(flags, 'platform', true)) };
    }
    default:
      throw invalidRequest(command ? `unknown command "${command}"\n${USAGE}` : USAGE);
  }
}
