// Per-platform policy for clients that register themselves (standard platforms only; see
// docs/decisions.md "Agent-ready authorization"): RFC 7591 dynamic registration and client ID
// metadata documents. Both default to off, so every existing platform is unchanged.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('platforms', (t) => {
    // off | token (an operator's initial access token) | open (anyone)
    t.text('registration').notNullable().defaultTo('off');
    // off | on | a space-separated list of host patterns (`*.example.com app.example.org`)
    t.text('client_metadata_documents').notNullable().defaultTo('off');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('platforms', (t) => {
    t.dropColumn('client_metadata_documents');
    t.dropColumn('registration');
  });
}
