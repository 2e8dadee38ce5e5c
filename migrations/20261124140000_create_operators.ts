// Admin console operators (issue 12 §4, DESIGN §14): argon2id password, a mandatory TOTP second factor (sealed, last step kept against replay), global or one platform.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('operators', (t) => {
    t.uuid('id').primary();
    // stored lower-cased (normalizeEmail), so unique is case-insensitive
    t.text('email').notNullable().unique();
    t.text('password_hash').notNullable();
    // null: global; else the one platform this operator may see (gone with the platform).
    t.uuid('platform_id').references('platforms.id').onDelete('CASCADE');
    // the authenticator app's secret, sealed under MASTER_KEY; pending until totp_confirmed_at is set
    t.text('sealed_totp_secret');
    t.timestamp('totp_confirmed_at', { useTz: true });
    // RFC 6238 time step of the last accepted code: that step and earlier ones are refused
    t.bigInteger('last_totp_step');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_sign_in_at', { useTz: true });
    t.timestamp('disabled_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('operators');
}
