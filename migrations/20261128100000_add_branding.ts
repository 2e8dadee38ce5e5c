// Issue 16 (DESIGN §18): per-platform branding (logo, accent colour, support email) and the
// client metadata shown on consent (OAuth 2.0 Dynamic Client Registration, RFC 7591 §2:
// logo_uri, client_uri, policy_uri, tos_uri).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('platforms', (t) => {
    // An https URL the pages load the logo from, when no logo is uploaded.
    t.text('logo_url');
    // The uploaded logo's content hash (in its URL, so a new logo is never served from a cache).
    t.text('logo_version');
    // #rrggbb, checked for contrast against white when set.
    t.text('accent_color');
    t.text('support_email');
  });
  // An uploaded logo, apart from the platform row (which every request reads and caches).
  await knex.schema.createTable('platform_logos', (t) => {
    t.uuid('platform_id').primary().references('id').inTable('platforms').onDelete('CASCADE');
    t.text('content_type').notNullable();
    t.binary('bytes').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.alterTable('clients', (t) => {
    t.text('logo_uri');
    t.text('client_uri');
    t.text('policy_uri');
    t.text('tos_uri');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumns('logo_uri', 'client_uri', 'policy_uri', 'tos_uri');
  });
  await knex.schema.dropTable('platform_logos');
  await knex.schema.alterTable('platforms', (t) => {
    t.dropColumns('logo_url', 'logo_version', 'accent_color', 'support_email');
  });
}
