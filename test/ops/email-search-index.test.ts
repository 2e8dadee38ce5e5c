import { buildTestApp } from '../helpers';

// The admin's email search (any part of the address) is served by a trigram index on both
// engines: Postgres's contrib pg_trgm, and the same extension loaded into the embedded database.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

it('the users table has the trigram index on the normalized email', async () => {
  const { rows } = await t.database.db.raw(
    `SELECT indexdef FROM pg_indexes WHERE tablename = 'users' AND indexname = 'users_email_normalized_trgm_index'`,
  );
  expect(rows).toHaveLength(1);
  expect(rows[0].indexdef).toMatch(/USING gin \(email_normalized gin_trgm_ops\)/);
});
