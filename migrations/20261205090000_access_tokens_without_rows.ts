// Access tokens are no longer written one row each (docs/decisions.md, "Access tokens without a
// row"): a token's jti names the grant it lives by (a refresh family, the code or device
// authorization it was redeemed for, or its client), and it is live while that grant is. What
// revokes a single token is a short denylist; an exchanged token keeps a lineage row. Every change that ends tokens tells the caches of all
// instances (NOTIFY), as the access-token rows' trigger did. `access_tokens` stays, read only, for
// the tokens issued before this version until they expire.
import type { Knex } from 'knex';

const QUIET = "current_setting('latchkey.purging', true) IS DISTINCT FROM 'on'";

export async function up(knex: Knex): Promise<void> {
  // RFC 7009: a revoked token, and the tokens exchanged from it, until they would have expired.
  await knex.raw(`
    CREATE TABLE revoked_access_tokens (
      jti_hash text PRIMARY KEY,
      user_id uuid,
      expires_at timestamptz NOT NULL
    )`);
  await knex.raw('CREATE INDEX revoked_access_tokens_expires_at_index ON revoked_access_tokens (expires_at)');
  await knex.raw(`
    CREATE TRIGGER revoked_access_tokens_added AFTER INSERT ON revoked_access_tokens
    FOR EACH ROW WHEN (NEW.user_id IS NOT NULL) EXECUTE FUNCTION latchkey_notify_user_change()`);

  // RFC 8693: an exchanged token names its subject token, so that revoking that token revokes it,
  // and its own client, so that deleting that client ends it.
  await knex.raw(`
    CREATE TABLE exchanged_access_tokens (
      jti_hash text PRIMARY KEY,
      subject_jti_hash text NOT NULL,
      platform_id uuid NOT NULL REFERENCES platforms (id) ON DELETE CASCADE,
      client_id uuid NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
      user_id uuid REFERENCES users (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL
    )`);
  await knex.raw('CREATE INDEX exchanged_access_tokens_subject_index ON exchanged_access_tokens (subject_jti_hash)');
  await knex.raw('CREATE INDEX exchanged_access_tokens_expires_at_index ON exchanged_access_tokens (expires_at)');
  await knex.raw(`
    CREATE TRIGGER exchanged_access_tokens_removed AFTER DELETE ON exchanged_access_tokens
    FOR EACH ROW WHEN (OLD.user_id IS NOT NULL AND ${QUIET}) EXECUTE FUNCTION latchkey_notify_user_change()`);

  // A replayed code ends the tokens its first exchange issued (RFC 6749 §4.1.2).
  await knex.raw('ALTER TABLE authorization_codes ADD COLUMN tokens_revoked_at timestamptz');
  await knex.raw(`
    CREATE TRIGGER authorization_codes_tokens_revoked AFTER UPDATE ON authorization_codes
    FOR EACH ROW WHEN (OLD.tokens_revoked_at IS DISTINCT FROM NEW.tokens_revoked_at)
    EXECUTE FUNCTION latchkey_notify_user_change()`);
  await knex.raw(`
    CREATE TRIGGER authorization_codes_removed AFTER DELETE ON authorization_codes
    FOR EACH ROW WHEN (OLD.consumed_at IS NOT NULL AND ${QUIET}) EXECUTE FUNCTION latchkey_notify_user_change()`);

  // A family revoked or deleted ends the access tokens it issued.
  await knex.raw(`
    CREATE TRIGGER refresh_token_families_revoked AFTER UPDATE ON refresh_token_families
    FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION latchkey_notify_user_change()`);
  await knex.raw(`
    CREATE TRIGGER refresh_token_families_removed AFTER DELETE ON refresh_token_families
    FOR EACH ROW WHEN (${QUIET}) EXECUTE FUNCTION latchkey_notify_user_change()`);

  // A redeemed device authorization revoked (its user disabled) or removed ends its tokens likewise.
  await knex.raw('ALTER TABLE device_authorizations ADD COLUMN tokens_revoked_at timestamptz');
  await knex.raw(`
    CREATE TRIGGER device_authorizations_tokens_revoked AFTER UPDATE ON device_authorizations
    FOR EACH ROW WHEN (OLD.tokens_revoked_at IS DISTINCT FROM NEW.tokens_revoked_at AND NEW.user_id IS NOT NULL)
    EXECUTE FUNCTION latchkey_notify_user_change()`);
  await knex.raw(`
    CREATE TRIGGER device_authorizations_removed AFTER DELETE ON device_authorizations
    FOR EACH ROW WHEN (OLD.status = 'consumed' AND OLD.user_id IS NOT NULL AND ${QUIET})
    EXECUTE FUNCTION latchkey_notify_user_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS device_authorizations_removed ON device_authorizations');
  await knex.raw('DROP TRIGGER IF EXISTS device_authorizations_tokens_revoked ON device_authorizations');
  await knex.raw('ALTER TABLE device_authorizations DROP COLUMN tokens_revoked_at');
  await knex.raw('DROP TRIGGER IF EXISTS refresh_token_families_removed ON refresh_token_families');
  await knex.raw('DROP TRIGGER IF EXISTS refresh_token_families_revoked ON refresh_token_families');
  await knex.raw('DROP TRIGGER IF EXISTS authorization_codes_removed ON authorization_codes');
  await knex.raw('DROP TRIGGER IF EXISTS authorization_codes_tokens_revoked ON authorization_codes');
  await knex.raw('ALTER TABLE authorization_codes DROP COLUMN tokens_revoked_at');
  await knex.raw('DROP TABLE exchanged_access_tokens');
  await knex.raw('DROP TABLE revoked_access_tokens');
}
