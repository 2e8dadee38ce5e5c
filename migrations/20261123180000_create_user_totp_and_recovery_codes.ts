// Second factors (issue 13, DESIGN §15): one TOTP secret per user, sealed under MASTER_KEY, with the last used time step (no replay); ten one-use recovery codes, stored hashed.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_totp', (t) => {
    t.uuid('user_id').primary().references('users.id').onDelete('CASCADE');
    t.text('sealed_secret').notNullable();
    // null while the user has not yet confirmed the enrolment with a first code
    t.timestamp('confirmed_at', { useTz: true });
    // RFC 6238 time step of the last accepted code: a code of that step or an earlier one is refused
    t.bigInteger('last_used_step');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('user_recovery_codes', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('code_hash').notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['user_id', 'code_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('user_recovery_codes');
  await knex.schema.dropTable('user_totp');
}
