// private_key_jwt assertions are single-use (RFC 7523 §3 item 7): the digest of every accepted
// `jti` is kept per client until the assertion expires, so a replay is refused on any instance by
// the primary key; expired rows are purged with the other expired rows.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('client_assertion_jtis', (t) => {
    t.uuid('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    // SHA-256 of the jti, base64url (src/crypto/digest.ts)
    t.text('jti_hash').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['client_id', 'jti_hash']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('client_assertion_jtis');
}
