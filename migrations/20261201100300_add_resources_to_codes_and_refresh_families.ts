// RFC 8707: the resource indicators an authorization request named, on its code and on the refresh
// family the code starts; each token request's audience is chosen among them and never beyond.
// Empty for a grant that named none (its tokens' aud is the client).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE authorization_codes ADD COLUMN resources text[] NOT NULL DEFAULT '{}'`);
  await knex.raw(`ALTER TABLE refresh_token_families ADD COLUMN resources text[] NOT NULL DEFAULT '{}'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE refresh_token_families DROP COLUMN resources');
  await knex.raw('ALTER TABLE authorization_codes DROP COLUMN resources');
}
