// Signing keys retired by an operator (issue 12): a rotated-out key normally verifies until the
// tokens it signed expire; `withdrawn_at` ends that at once. Key changes are announced through
// NOTIFY so every instance drops its cached keys (and verified tokens) without waiting.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signing_keys', (t) => {
    t.timestamp('withdrawn_at', { useTz: true });
  });
  await knex.raw(`
    CREATE OR REPLACE FUNCTION latchkey_notify_signing_key_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('latchkey_cache', 'keys:' || COALESCE(NEW.platform_id, OLD.platform_id)::text);
      RETURN NULL;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(`
    CREATE TRIGGER signing_keys_changed AFTER INSERT OR UPDATE OR DELETE ON signing_keys
    FOR EACH ROW EXECUTE FUNCTION latchkey_notify_signing_key_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS signing_keys_changed ON signing_keys');
  await knex.raw('DROP FUNCTION IF EXISTS latchkey_notify_signing_key_change()');
  await knex.schema.alterTable('signing_keys', (t) => {
    t.dropColumn('withdrawn_at');
  });
}
