// Asymmetric signing keys in the same table as the HS512 ones (issue 14): one life cycle (status,
// rotation, grace, withdrawn_at, NOTIFY trigger) for every kind. An HS512 key holds sealed_secret;
// an RS256/ES256/EdDSA key holds its private JWK sealed under MASTER_KEY and its public JWK in clear.
// One active key per platform and algorithm.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signing_keys', (t) => {
    t.text('alg').notNullable().defaultTo('HS512');
    t.text('sealed_private_jwk');
    t.jsonb('public_jwk');
  });
  await knex.raw('ALTER TABLE signing_keys ALTER COLUMN sealed_secret DROP NOT NULL');
  await knex.raw(`ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_alg_check CHECK (
    (alg = 'HS512' AND sealed_secret IS NOT NULL AND sealed_private_jwk IS NULL AND public_jwk IS NULL)
    OR (alg IN ('RS256', 'ES256', 'EdDSA') AND sealed_secret IS NULL AND sealed_private_jwk IS NOT NULL AND public_jwk IS NOT NULL))`);
  await knex.raw('DROP INDEX signing_keys_one_active');
  await knex.raw(
    `CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (platform_id, alg) WHERE status = 'active'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex('signing_keys').whereNot({ alg: 'HS512' }).delete();
  await knex.raw('DROP INDEX signing_keys_one_active');
  await knex.raw(`CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (platform_id) WHERE status = 'active'`);
  await knex.raw('ALTER TABLE signing_keys DROP CONSTRAINT signing_keys_alg_check');
  await knex.raw('ALTER TABLE signing_keys ALTER COLUMN sealed_secret SET NOT NULL');
  await knex.schema.alterTable('signing_keys', (t) => {
    t.dropColumn('public_jwk');
    t.dropColumn('sealed_private_jwk');
    t.dropColumn('alg');
  });
}
