// Issue 14 (DESIGN §16): which applications each browser sign-in session (sid) has signed in to, so
// that signing out reaches them by OIDC Back-Channel and Front-Channel Logout 1.0.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('session_clients', (t) => {
    t.uuid('platform_id').notNullable().references('id').inTable('platforms').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('browser_session_id').notNullable();
    t.uuid('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    t.text('sid').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['browser_session_id', 'user_id', 'client_id']);
    t.index(['platform_id', 'user_id']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('session_clients');
}
