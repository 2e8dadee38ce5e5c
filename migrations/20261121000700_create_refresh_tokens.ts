// Rotating refresh tokens grouped in families, so reuse can revoke the whole family (DESIGN §5).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('refresh_token_families', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.uuid('client_id').notNullable().references('clients.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('code_id');
    t.text('scope').notNullable();
    t.timestamp('auth_time', { useTz: true }).notNullable();
    t.text('browser_session_id');
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'client_id']);
    t.index(['browser_session_id']);
    t.index(['code_id']);
  });
  await knex.schema.createTable('refresh_tokens', (t) => {
    t.uuid('id').primary();
    t.uuid('family_id').notNullable().references('refresh_token_families.id').onDelete('CASCADE');
    t.text('token_hash').notNullable().unique();
    t.timestamp('rotated_at', { useTz: true });
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['family_id']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('refresh_tokens');
  await knex.schema.dropTable('refresh_token_families');
}
