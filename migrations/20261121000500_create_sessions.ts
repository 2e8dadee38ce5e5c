// Browser sessions: connect-pg-simple's own table layout (DESIGN §9).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE "session" (
      "sid" varchar NOT NULL COLLATE "default" PRIMARY KEY,
      "sess" json NOT NULL,
      "expire" timestamp(6) NOT NULL
    )`);
  await knex.raw(`CREATE INDEX "IDX_session_expire" ON "session" ("expire")`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('session');
}
