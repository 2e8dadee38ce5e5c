// Issue 14 (DESIGN §16): per-client ID-token algorithm on standard platforms, and the client's
// OIDC Back-Channel and Front-Channel Logout 1.0 registration, on both profiles.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.text('id_token_signed_response_alg'); // null: the profile's default (seed HS512, standard RS256)
    t.text('backchannel_logout_uri');
    t.boolean('backchannel_logout_session_required').notNullable().defaultTo(false);
    t.text('frontchannel_logout_uri');
    t.boolean('frontchannel_logout_session_required').notNullable().defaultTo(false);
  });
  await knex.raw(
    "ALTER TABLE clients ADD CONSTRAINT clients_id_token_alg_check CHECK (id_token_signed_response_alg IS NULL OR id_token_signed_response_alg IN ('RS256', 'ES256', 'EdDSA', 'HS512'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE clients DROP CONSTRAINT clients_id_token_alg_check');
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumn('id_token_signed_response_alg');
    t.dropColumn('backchannel_logout_uri');
    t.dropColumn('backchannel_logout_session_required');
    t.dropColumn('frontchannel_logout_uri');
    t.dropColumn('frontchannel_logout_session_required');
  });
}
