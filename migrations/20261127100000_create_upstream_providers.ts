// Issue 15 (DESIGN §17): upstream identity providers per platform, the identities linked to local
// users, and users without a password (signed up through an upstream provider).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('upstream_providers', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').notNullable().references('id').inTable('platforms').onDelete('CASCADE');
    // In URLs and button names: /interaction/:iid/upstream/:slug.
    t.text('slug').notNullable();
    // oidc (generic, by discovery), google, microsoft (OIDC presets), github (OAuth 2.0 + its REST API).
    t.text('kind').notNullable();
    t.text('display_name').notNullable();
    // oidc/google/microsoft: the issuer discovered from; github: the web base URL (GitHub Enterprise).
    t.text('issuer');
    // github: the REST API base URL; microsoft: unused (the tenant is in the issuer).
    t.text('api_base_url');
    t.text('client_id').notNullable();
    t.text('sealed_client_secret');
    t.text('scopes').notNullable();
    // Local claim → upstream claim name, for upstreams with other names (DESIGN §17).
    t.jsonb('claim_mapping').notNullable().defaultTo('{}');
    // email_verified carried over only when true and the upstream said so.
    t.boolean('trust_email').notNullable().defaultTo(false);
    // The upstream's amr satisfies the platform's MFA policy only when true.
    t.boolean('trust_mfa').notNullable().defaultTo(false);
    // The upstream's tokens kept (sealed) on the identity only when true.
    t.boolean('store_tokens').notNullable().defaultTo(false);
    t.boolean('enabled').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['platform_id', 'slug']);
  });

  await knex.schema.createTable('user_identities', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').notNullable().references('id').inTable('platforms').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.uuid('provider_id').notNullable().references('id').inTable('upstream_providers').onDelete('CASCADE');
    // The upstream's stable subject (OIDC `sub`, GitHub's numeric user id).
    t.text('subject').notNullable();
    // The email the upstream gave at the last sign-in: shown on the account page.
    t.text('email');
    t.text('sealed_tokens');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['provider_id', 'subject']);
    // One identity per provider per user.
    t.unique(['provider_id', 'user_id']);
    t.index(['user_id']);
  });

  await knex.schema.alterTable('users', (t) => {
    t.text('password_hash').nullable().alter();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('user_identities');
  await knex.schema.dropTable('upstream_providers');
}
