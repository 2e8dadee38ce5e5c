// Initial access tokens (RFC 7591 §3) for platforms whose registration policy is `token`: made by
// an operator, presented as a Bearer token at the registration endpoint. Only the SHA-256 digest
// is stored; uses are counted in one UPDATE so concurrent registrations cannot overspend one.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('registration_tokens', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').notNullable().references('id').inTable('platforms').onDelete('CASCADE');
    t.text('token_hash').notNullable();
    // null: unlimited
    t.integer('max_uses');
    t.integer('uses').notNullable().defaultTo(0);
    // null: never expires
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    // Who made it, as the audit log names the actor (admin token, operator, CLI).
    t.text('created_by');
    t.index(['platform_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('registration_tokens');
}
