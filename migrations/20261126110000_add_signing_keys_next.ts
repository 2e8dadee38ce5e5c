// Key rotation with overlap (issue 14, DESIGN §16): an asymmetric rotation inserts the new key as
// `next` — published in the JWKS at once, signing from `activates_at` on. Which key signs is decided
// when keys are read, by activates_at, so every instance agrees without a job; the next rotation
// (or retire) writes the change down. At most one next key per platform and algorithm; HS512 keys
// never have one (their rotation is immediate, as the spec's interface has always done).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signing_keys', (t) => {
    t.timestamp('activates_at', { useTz: true });
  });
  await knex.raw('ALTER TABLE signing_keys DROP CONSTRAINT signing_keys_status_check');
  await knex.raw(
    `ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_status_check CHECK (status IN ('active', 'next', 'retired'))`,
  );
  await knex.raw(
    `ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_next_check CHECK (status <> 'next' OR (alg <> 'HS512' AND activates_at IS NOT NULL))`,
  );
  await knex.raw(`CREATE UNIQUE INDEX signing_keys_one_next ON signing_keys (platform_id, alg) WHERE status = 'next'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX signing_keys_one_next');
  await knex.raw('ALTER TABLE signing_keys DROP CONSTRAINT signing_keys_next_check');
  // A pending key never signed anything: it goes; the active key stays active.
  await knex('signing_keys').where({ status: 'next' }).delete();
  await knex.raw('ALTER TABLE signing_keys DROP CONSTRAINT signing_keys_status_check');
  await knex.raw(
    `ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_status_check CHECK (status IN ('active', 'retired'))`,
  );
  await knex.schema.alterTable('signing_keys', (t) => {
    t.dropColumn('activates_at');
  });
}
