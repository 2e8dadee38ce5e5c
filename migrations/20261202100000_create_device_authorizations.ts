// The Device Authorization Grant (RFC 8628) of standard platforms: one row per device code, from
// the device's request to its single redemption. Both codes are stored as SHA-256 digests; the
// user code is unique over every platform because the person types it at BASE_URL/device, which
// names no platform. Expired rows are deleted by the purge.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('device_authorizations', (t) => {
    t.uuid('id').primary();
    t.text('device_code_hash').notNullable().unique();
    // The digest of the normalised user code (8 letters, no dash).
    t.text('user_code_hash').notNullable().unique();
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.uuid('client_id').notNullable().references('clients.id').onDelete('CASCADE');
    t.text('scope').notNullable();
    // The RFC 8707 resources named: their URIs (the audience), and their granted scopes for consent.
    t.specificType('resources', 'text[]').notNullable().defaultTo('{}');
    t.jsonb('resource_grants').notNullable().defaultTo('[]');
    // pending → approved | denied; approved → consumed (the tokens were issued).
    t.text('status').notNullable().defaultTo('pending');
    t.uuid('user_id').references('users.id').onDelete('CASCADE');
    t.timestamp('auth_time', { useTz: true });
    t.text('amr');
    t.text('acr');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('last_polled_at', { useTz: true });
    // RFC 8628 §3.5: grows by 5 with each slow_down.
    t.integer('interval_seconds').notNullable();
    t.timestamp('decided_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at']);
  });
  await knex.raw(
    "ALTER TABLE device_authorizations ADD CONSTRAINT device_authorizations_status_check CHECK (status IN ('pending', 'approved', 'denied', 'consumed'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('device_authorizations');
}
