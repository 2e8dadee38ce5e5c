import { buildTestApp } from '../helpers';
import { EXCHANGE_CODE, ROTATE_REFRESH_TOKEN } from '../../src/repositories/grant-statements.repository';

// The grant statements are prepared once per connection, and Postgres may then keep one generic
// plan for the connection's life, made whatever size the tables had then. On tables that are new
// and never analyzed (a fresh install, a restore, a database without autovacuum) every table they
// read must still be reached through an index: a sequential scan planned for a small table would
// cost a grant more with every row added.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

it.each([EXCHANGE_CODE, ROTATE_REFRESH_TOKEN])(
  '$name reads every table through an index under a generic plan',
  async (statement) => {
    const params = Math.max(...[...statement.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    const plan = await t.database.db.transaction(async (trx) => {
      await trx.raw('SET LOCAL plan_cache_mode = force_generic_plan');
      await trx.raw(`PREPARE generic_plan_check AS ${statement.text}`);
      try {
        const explained = await trx.raw(`EXPLAIN EXECUTE generic_plan_check(${Array(params).fill('NULL').join(', ')})`);
        return (explained.rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await trx.raw('DEALLOCATE generic_plan_check');
      }
    });
    expect(plan).toMatch(/Index Scan/);
    expect(plan).not.toMatch(/Seq Scan/);
  },
);
