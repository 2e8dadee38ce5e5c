import type { Knex } from 'knex';
import type { Queryable } from './index';

/** Runs `fn` once `db`'s transaction has committed (at once outside a transaction); never after a rollback. */
export function afterCommit(db: Queryable, fn: () => void): void {
  const trx = db as Knex.Transaction;
  if (trx.isTransaction && trx.executionPromise !== undefined)
    trx.executionPromise.then(
      () => setImmediate(fn),
      () => {},
    );
  else setImmediate(fn);
}
