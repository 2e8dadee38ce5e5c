// What a client may do at the token endpoint and how it proves itself: the grants it is allowed
// (an operator's client had the first two implicitly; a dynamic client's registered list moves
// here), its public keys for private_key_jwt (inline or at a URL), and the resources it may
// exchange access tokens for. Defaults keep every existing client as it was.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.specificType('grant_types', 'text[]').notNullable().defaultTo(knex.raw("'{authorization_code,refresh_token}'"));
    t.jsonb('jwks');
    t.text('jwks_uri');
    t.specificType('token_exchange_resources', 'text[]').notNullable().defaultTo('{}');
  });
  await knex.raw(
    `UPDATE clients SET grant_types = ARRAY(SELECT jsonb_array_elements_text(registration_metadata->'grant_types'))
      WHERE registration_metadata->'grant_types' IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumn('token_exchange_resources');
    t.dropColumn('jwks_uri');
    t.dropColumn('jwks');
    t.dropColumn('grant_types');
  });
}
