// The audit log (issue 12, DESIGN §14): append-only, one row per security event or admin change, never a secret.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_events', (t) => {
    // bigserial: the cursor of the audit API pages by it, newest first, with no ties.
    t.bigIncrements('id').primary();
    t.timestamp('occurred_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('kind').notNullable();
    // Who did it: 'user' (the subject itself), 'admin_token', 'operator', 'cli' or 'system'.
    t.text('actor_type').notNullable();
    t.text('actor_id');
    t.text('actor_name');
    // No foreign keys: the log outlives the platforms, users and clients it names.
    t.uuid('platform_id');
    t.uuid('subject');
    t.uuid('client_id');
    t.text('source');
    t.text('user_agent');
    t.text('request_id');
    t.jsonb('details').notNullable().defaultTo('{}');
    t.index(['platform_id', 'id']);
    t.index(['subject', 'id']);
    t.index(['kind', 'id']);
    t.index(['occurred_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_events');
}
