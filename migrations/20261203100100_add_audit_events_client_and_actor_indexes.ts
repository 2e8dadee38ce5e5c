// The audit API filters by client and by actor type with no index for either: a filter few events match read the whole log (10M events: about 1 s a page).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Newest first within the filter, as (subject, id) and (kind, id) serve theirs; events of no client stay out of it.
  await knex.raw(
    'CREATE INDEX audit_events_client_id_id_index ON audit_events (client_id, id) WHERE client_id IS NOT NULL',
  );
  await knex.raw('CREATE INDEX audit_events_actor_type_id_index ON audit_events (actor_type, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX audit_events_actor_type_id_index');
  await knex.raw('DROP INDEX audit_events_client_id_id_index');
}
