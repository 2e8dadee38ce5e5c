// RFC 8707 resources of a `standard` platform (APIs, MCP servers): the indicator a client names,
// the scopes the resource defines with their consent descriptions, its default scopes and token
// lifetime. A change is NOTIFYed so every instance drops its cached list of the platform's resources.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('resources', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').notNullable().references('id').inTable('platforms').onDelete('CASCADE');
    // The resource indicator: an absolute URI without a fragment, compared as a string.
    t.text('uri').notNullable();
    t.text('name').notNullable();
    // [{name, description}] in the order consent shows them.
    t.jsonb('scopes').notNullable().defaultTo('[]');
    // Scope names a request naming the resource and no scope gets; [] = every scope it defines.
    t.jsonb('default_scopes').notNullable().defaultTo('[]');
    // null: the platform's default access-token lifetime.
    t.integer('access_token_ttl_seconds');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['platform_id', 'uri']);
  });
  await knex.raw(`
    CREATE OR REPLACE FUNCTION latchkey_notify_resource_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('latchkey_cache', 'resources:' || COALESCE(NEW.platform_id, OLD.platform_id)::text);
      RETURN NULL;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(`
    CREATE TRIGGER resources_changed AFTER INSERT OR UPDATE OR DELETE ON resources
    FOR EACH ROW EXECUTE FUNCTION latchkey_notify_resource_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS resources_changed ON resources');
  await knex.raw('DROP FUNCTION IF EXISTS latchkey_notify_resource_change()');
  await knex.schema.dropTable('resources');
}
