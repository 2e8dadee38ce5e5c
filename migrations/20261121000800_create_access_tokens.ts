// Access-token records keyed by the SHA-256 of the jti, so userinfo/introspection honour revocation at once.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('access_tokens', (t) => {
    t.text('jti_hash').primary();
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.uuid('client_id').notNullable().references('clients.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('scope').notNullable();
    t.uuid('family_id').references('refresh_token_families.id').onDelete('CASCADE');
    t.uuid('code_id');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['family_id']);
    t.index(['code_id']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('access_tokens');
}
