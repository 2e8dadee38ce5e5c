// Single-use codes, stored as SHA-256 hashes and bound to everything the exchange checks (DESIGN §5).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('authorization_codes', (t) => {
    t.uuid('id').primary();
    t.text('code_hash').notNullable().unique();
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.uuid('client_id').notNullable().references('clients.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('redirect_uri').notNullable();
    t.text('scope').notNullable();
    t.text('nonce');
    t.text('code_challenge');
    t.boolean('include_auth_time').notNullable().defaultTo(false);
    t.timestamp('auth_time', { useTz: true }).notNullable();
    t.text('browser_session_id');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('consumed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('authorization_codes');
}
