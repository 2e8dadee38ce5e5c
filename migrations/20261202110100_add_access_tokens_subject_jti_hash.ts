// RFC 8693: an access token issued by token exchange names the token it was exchanged from, so that
// revoking that token (RFC 7009) revokes what was exchanged from it, at any depth.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE access_tokens ADD COLUMN subject_jti_hash text');
  await knex.raw(
    'CREATE INDEX access_tokens_subject_jti_hash_index ON access_tokens (subject_jti_hash) WHERE subject_jti_hash IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS access_tokens_subject_jti_hash_index');
  await knex.raw('ALTER TABLE access_tokens DROP COLUMN subject_jti_hash');
}
