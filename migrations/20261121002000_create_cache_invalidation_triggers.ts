// In-process caches of tokens and users are invalidated on every instance through NOTIFY,
// raised by the database itself so that no code path can forget to (issue: performance).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION latchkey_notify_user_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('latchkey_cache', 'user:' || COALESCE(NEW.user_id, OLD.user_id)::text);
      RETURN NULL;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION latchkey_notify_user_row_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('latchkey_cache', 'user:' || COALESCE(NEW.id, OLD.id)::text);
      RETURN NULL;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(`
    CREATE TRIGGER access_tokens_revoked AFTER UPDATE OR DELETE ON access_tokens
    FOR EACH ROW EXECUTE FUNCTION latchkey_notify_user_change()`);
  await knex.raw(`
    CREATE TRIGGER users_changed AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION latchkey_notify_user_row_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS users_changed ON users');
  await knex.raw('DROP TRIGGER IF EXISTS access_tokens_revoked ON access_tokens');
  await knex.raw('DROP FUNCTION IF EXISTS latchkey_notify_user_row_change()');
  await knex.raw('DROP FUNCTION IF EXISTS latchkey_notify_user_change()');
}
