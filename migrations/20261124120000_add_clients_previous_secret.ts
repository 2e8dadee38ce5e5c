// Client secret rotation with an overlap (issue 12): the previous secret keeps authenticating the
// client until previous_secret_expires_at. A change to a client is NOTIFYed so every instance
// drops its cached copy (secret, ID-token key) at once.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.text('previous_sealed_secret');
    t.timestamp('previous_secret_expires_at', { useTz: true });
  });
  await knex.raw(`
    CREATE OR REPLACE FUNCTION latchkey_notify_client_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('latchkey_cache', 'client:' || OLD.id::text);
      RETURN NULL;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(`
    CREATE TRIGGER clients_changed AFTER UPDATE OR DELETE ON clients
    FOR EACH ROW EXECUTE FUNCTION latchkey_notify_client_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS clients_changed ON clients');
  await knex.raw('DROP FUNCTION IF EXISTS latchkey_notify_client_change()');
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumn('previous_secret_expires_at');
    t.dropColumn('previous_sealed_secret');
  });
}
