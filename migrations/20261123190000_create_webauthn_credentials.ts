// Passkeys (issue 13, DESIGN §15): several WebAuthn credentials per user, each named, for a passwordless sign-in or a second factor.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webauthn_credentials', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    // The authenticator's credential id (base64url), as the browser returns it at sign-in.
    t.text('credential_id').notNullable();
    // COSE public key (base64url): public, so not sealed.
    t.text('public_key').notNullable();
    // Signature counter (unsigned 32-bit, so bigint); 0 for authenticators that keep none.
    t.bigInteger('counter').notNullable().defaultTo(0);
    // Transports the browser reported (usb, nfc, ble, internal, hybrid), comma-separated: hints for allowCredentials.
    t.text('transports').notNullable().defaultTo('');
    t.text('name').notNullable();
    // Synced (multi-device) passkeys are backup-eligible: amr "swk" rather than "hwk" (RFC 8176).
    t.boolean('is_backup_eligible').notNullable().defaultTo(false);
    t.boolean('is_backed_up').notNullable().defaultTo(false);
    t.text('aaguid');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    // A passwordless sign-in looks the credential up by its id within the platform.
    t.unique(['platform_id', 'credential_id']);
    t.index(['user_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webauthn_credentials');
}
