// Durable mail (DESIGN §13): each mail is a row written in the transaction of the event that causes it, sent by a worker on any instance.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mail_outbox', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').references('platforms.id').onDelete('CASCADE');
    // What the mail is (verify_email, reset_password, password_changed): for operators, never secret.
    t.text('kind').notNullable();
    t.text('recipient').notNullable();
    t.text('recipient_name').notNullable().defaultTo('');
    t.text('from_name').notNullable();
    t.text('subject').notNullable();
    // Text and HTML parts sealed under MASTER_KEY (they may carry a one-time link); cleared once sent.
    t.text('sealed_body');
    t.text('status').notNullable().defaultTo('queued').checkIn(['queued', 'sending', 'sent', 'dead']);
    t.integer('attempts').notNullable().defaultTo(0);
    // queued: not before this time; sending: the claim's lease ends then and any worker may take it over.
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('sent_at', { useTz: true });
  });
  // The workers' claim reads only this small partial index.
  await knex.raw(
    `CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE status IN ('queued', 'sending')`,
  );
  await knex.raw('CREATE INDEX mail_outbox_status_created_idx ON mail_outbox (status, created_at)');
  await knex.raw('CREATE INDEX mail_outbox_platform_created_idx ON mail_outbox (platform_id, created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mail_outbox');
}
