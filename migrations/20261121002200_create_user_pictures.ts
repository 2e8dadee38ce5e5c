// Uploaded profile pictures, kept in the database so every instance serves them (DESIGN §3: nothing in process memory or local disk).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_pictures', (t) => {
    t.uuid('user_id').primary().references('users.id').onDelete('CASCADE');
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.text('content_type').notNullable();
    t.binary('bytes').notNullable();
    // Part of the served URL, so a new picture gets a new URL and the old one may be cached forever.
    t.text('version').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('user_pictures');
}
