// Per-platform second-factor policy (issue 13, DESIGN §15): off hides enrolment and never asks; optional asks enrolled users; required makes every user enrol.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('platforms', (t) => {
    t.text('mfa_policy').notNullable().defaultTo('optional');
  });
  await knex.raw(
    "ALTER TABLE platforms ADD CONSTRAINT platforms_mfa_policy_check CHECK (mfa_policy IN ('off', 'optional', 'required'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE platforms DROP CONSTRAINT platforms_mfa_policy_check');
  await knex.schema.alterTable('platforms', (t) => {
    t.dropColumn('mfa_policy');
  });
}
