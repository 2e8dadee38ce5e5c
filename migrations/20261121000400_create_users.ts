// People of a platform with every claim of the spec; email unique per platform, case-insensitive.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('email_normalized').notNullable();
    t.boolean('email_verified').notNullable().defaultTo(false);
    t.text('password_hash').notNullable();
    t.text('given_name').notNullable();
    t.text('family_name').notNullable();
    t.text('middle_name');
    t.text('nickname');
    t.text('preferred_username');
    t.date('birthdate');
    t.text('phone_number');
    t.jsonb('address');
    t.text('picture_url');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['platform_id', 'email_normalized']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('users');
}
