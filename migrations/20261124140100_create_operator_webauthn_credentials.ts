// Operators' passkeys (issue 12 §4, DESIGN §14): a second factor of the admin console, next to or instead of TOTP.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('operator_webauthn_credentials', (t) => {
    t.uuid('id').primary();
    t.uuid('operator_id').notNullable().references('operators.id').onDelete('CASCADE');
    // The authenticator's credential id (base64url), unique: a sign-in looks it up.
    t.text('credential_id').notNullable().unique();
    // COSE public key (base64url): public, so not sealed.
    t.text('public_key').notNullable();
    // Signature counter (unsigned 32-bit, so bigint); 0 for authenticators that keep none.
    t.bigInteger('counter').notNullable().defaultTo(0);
    // Transports the browser reported, comma-separated: hints for allowCredentials.
    t.text('transports').notNullable().defaultTo('');
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.index(['operator_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('operator_webauthn_credentials');
}
