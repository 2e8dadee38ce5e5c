// How the user signed in (RFC 8176 amr, space-separated, and the acr), carried from the code to the ID token and kept by the refresh family so refreshed ID tokens say the same (issue 13).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  for (const table of ['authorization_codes', 'refresh_token_families']) {
    await knex.schema.alterTable(table, (t) => {
      t.text('amr'); // null: issued before issue 13 (no claim)
      t.text('acr');
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['authorization_codes', 'refresh_token_families']) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('amr');
      t.dropColumn('acr');
    });
  }
}
