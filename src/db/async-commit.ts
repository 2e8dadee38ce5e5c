/**
 * A FROM item that turns the statement's own (implicit) transaction into an asynchronous commit:
 * Postgres acknowledges the commit before its WAL reaches the disk (`synchronous_commit = off`
 * for this transaction only, so it is correct through a transaction pooler too). The write is
 * never half-done: a server crash can only forget it whole, and only if it came in the last
 * moments (the WAL writer flushes within three `wal_writer_delay`s, 600 ms by default). Any later
 * durable commit flushes the WAL up to its own record, so it makes every earlier asynchronous
 * commit durable with it. For the writes of a flow that has no effect until a durable commit
 * ends it (docs/decisions.md, "Durable commits per sign-in"). Never inside a transaction of
 * other writes: it would make that whole transaction asynchronous.
 */
export const ASYNC_COMMIT = `(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit`;
