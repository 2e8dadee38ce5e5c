// RFC 6749 §4.4: a client credentials access token belongs to the client alone, so an access-token
// row may have no user (its `sub` is the client's id, RFC 9068 §2.2). Userinfo refuses such a token.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE access_tokens ALTER COLUMN user_id DROP NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DELETE FROM access_tokens WHERE user_id IS NULL');
  await knex.raw('ALTER TABLE access_tokens ALTER COLUMN user_id SET NOT NULL');
}
