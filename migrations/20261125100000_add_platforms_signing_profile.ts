// Per-platform signing profile (issue 14, DESIGN §16): `seed` keeps the spec's HS512 interface byte
// for byte; `standard` adds asymmetric keys and a public JWKS.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('platforms', (t) => {
    t.text('signing_profile').notNullable().defaultTo('seed');
  });
  await knex.raw(
    "ALTER TABLE platforms ADD CONSTRAINT platforms_signing_profile_check CHECK (signing_profile IN ('seed', 'standard'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE platforms DROP CONSTRAINT platforms_signing_profile_check');
  await knex.schema.alterTable('platforms', (t) => {
    t.dropColumn('signing_profile');
  });
}
