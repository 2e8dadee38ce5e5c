// Admin API tokens (issue 12, DESIGN §14): `lk_admin_…`, shown once, stored as a SHA-256 digest; global or one platform.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('admin_tokens', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    // null: global; else the one platform this token may see (gone with the platform).
    t.uuid('platform_id').references('platforms.id').onDelete('CASCADE');
    // 256 random bits, so a plain digest (like refresh tokens) is enough; looked up by it.
    t.text('token_digest').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('admin_tokens');
}
