// Issue 14 (DESIGN §16): OIDC Back-Channel Logout 1.0 deliveries, an outbox like mail's: a row is
// written in the sign-out's transaction and POSTed by a worker on any instance, with retries.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('backchannel_logouts', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    // No foreign keys on client and user: a deleted user must still be signed out of its apps (the
    // row is written just before the user goes), and a deleted client's row fails visibly.
    t.uuid('client_id').notNullable();
    t.uuid('user_id').notNullable();
    // Null: the user's sign-in session is not known (a sub-only logout token, §2.4).
    t.text('sid');
    t.text('status').notNullable().defaultTo('pending').checkIn(['pending', 'sending', 'delivered', 'failed']);
    t.integer('attempts').notNullable().defaultTo(0);
    // pending: not before this time; sending: the claim's lease ends then and any worker may take it over.
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Short, for operators: a status code or the outbound failure's reason, never the token.
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('delivered_at', { useTz: true });
  });
  // The workers' claim reads only this small partial index.
  await knex.raw(
    `CREATE INDEX backchannel_logouts_due_idx ON backchannel_logouts (next_attempt_at) WHERE status IN ('pending', 'sending')`,
  );
  await knex.raw('CREATE INDEX backchannel_logouts_status_created_idx ON backchannel_logouts (status, created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('backchannel_logouts');
}
