// The purge deletes expired access tokens by the million; each deletion raised a cache
// invalidation (NOTIFY) that every instance had to read, and that emptied part of its token cache
// for nothing: a cached token past its expiry is never served anyway. The purge marks its own
// transactions (latchkey.purging), and the trigger stays quiet for them (issue 17).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS access_tokens_revoked ON access_tokens');
  await knex.raw(`
    CREATE TRIGGER access_tokens_revoked AFTER UPDATE OR DELETE ON access_tokens
    FOR EACH ROW WHEN (current_setting('latchkey.purging', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION latchkey_notify_user_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS access_tokens_revoked ON access_tokens');
  await knex.raw(`
    CREATE TRIGGER access_tokens_revoked AFTER UPDATE OR DELETE ON access_tokens
    FOR EACH ROW EXECUTE FUNCTION latchkey_notify_user_change()`);
}
