// Sign-in and sign-up attempt throttles shared by every instance (password guessing; issue 5 point 2).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('attempt_throttles', (t) => {
    // e.g. "signin:account:<platform>:<sha256(email)>:<source>"; emails are never stored in clear here
    t.text('key').primary();
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('window_started_at', { useTz: true }).notNullable();
    t.integer('locks').notNullable().defaultTo(0);
    t.timestamp('locked_until', { useTz: true });
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('attempt_throttles');
}
