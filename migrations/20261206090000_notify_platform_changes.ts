// A platform's row is cached on every instance until it changes: the change (and a new platform,
// which an instance may have cached as unknown) is NOTIFYed so each drops its copy at once
// (docs/decisions.md, "Caches sized for the tenants").
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION latchkey_notify_platform_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('latchkey_cache', 'platform:' || COALESCE(NEW.id, OLD.id)::text);
      RETURN NULL;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(`
    CREATE TRIGGER platforms_changed AFTER INSERT OR UPDATE OR DELETE ON platforms
    FOR EACH ROW EXECUTE FUNCTION latchkey_notify_platform_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS platforms_changed ON platforms');
  await knex.raw('DROP FUNCTION IF EXISTS latchkey_notify_platform_change()');
}
