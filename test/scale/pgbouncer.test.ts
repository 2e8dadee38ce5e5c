import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { buildTestApp, TEST_ENV } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { startProvider, type ProviderProcess } from '../support/provider-process';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer';
import { browser } from '../support/browser';
import { basic, exchange, refresh, signInThrough, userinfo } from '../support/account-flows';

// The pool may go through PgBouncer in transaction mode (DATABASE_URL), while the
// LISTEN connection goes straight to Postgres (DATABASE_LISTEN_URL): a LISTEN through a
// transaction pooler lands on whatever server connection is free and its notifications are lost.
// PgBouncer fronts a Postgres server: there is nothing to show on the embedded database.
const embedded = process.env.TEST_DATABASE_KIND === 'embedded';
if (embedded) console.warn('pgbouncer: skipped on the embedded database (run with DATABASE_URL for this test)');
const describeOnPostgres = embedded ? describe.skip : describe;

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let setup: TestApp; // fixtures through the real services, straight to the database
let bouncer: PgBouncer;
let a: ProviderProcess;
let b: ProviderProcess;
let dataDir: string;

describeOnPostgres('two instances with their pools behind PgBouncer (transaction mode)', () => {
  beforeAll(async () => {
    setup = await buildTestApp();
    bouncer = await startPgBouncer(process.env.TEST_DATABASE_URL!);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-pgbouncer-data-'));
    const env = {
      ...TEST_ENV,
      LOG_LEVEL: 'warn',
      DEMO_SEED: 'false',
      DATA_DIR: dataDir,
      BASE_URL: 'http://lb.test',
      DATABASE_URL: bouncer.url,
      DATABASE_LISTEN_URL: process.env.TEST_DATABASE_URL!,
    };
    [a, b] = await Promise.all([startProvider(env), startProvider(env)]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await bouncer?.stop();
    await setup?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('signs in on A, exchanges on B, refreshes on A; a revocation on A reaches B’s token cache', async () => {
    const p = await buildPlatform(setup.services);
    const c = await buildClient(setup.services, p.id);
    const u = await buildUser(setup.services, p.id);
    const A = a.url as unknown as Express;
    const B = b.url as unknown as Express;

    const callback = await signInThrough(browser(A), p, c, u.email);
    const issued = await exchange(B, p, c, callback); // the code statements, without named statements
    const rotated = await refresh(A, p, c, issued.refresh_token!);
    expect(rotated.status).toBe(200);
    const reuse = await refresh(B, p, c, issued.refresh_token!); // within the grace window: the same successor
    expect([reuse.status, reuse.body.refresh_token]).toEqual([200, rotated.body.refresh_token]);

    const onB = () => userinfo(B, p, rotated.body.access_token);
    expect([(await onB()).status, (await onB()).body.email]).toEqual([200, u.email]);
    // B answers from its token cache, which serves only while its LISTEN connection listens: a
    // change made without a notification (triggers off for one transaction) stays unseen there.
    await setup.database.db.transaction(async (trx) => {
      await trx.raw('SET LOCAL session_replication_role = replica');
      await trx('users')
        .where({ id: u.id })
        .update({ email: `unseen-${u.email}` });
    });
    expect([(await onB()).status, (await onB()).body.email]).toEqual([200, u.email]);

    const revoked = await request(A)
      .post('/oauth/revoke')
      .set('Authorization', basic(c))
      .type('form')
      .send({ platform_guid: p.id, token: rotated.body.refresh_token, token_type_hint: 'refresh_token' });
    expect(revoked.status).toBe(200);
    // B learns it through NOTIFY on its direct LISTEN connection, not by re-reading the row.
    let status = 0;
    for (const started = Date.now(); Date.now() - started < 3_000 && status !== 401;) {
      status = (await onB()).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(401);
    expect((await refresh(B, p, c, rotated.body.refresh_token)).body.error).toBe('invalid_grant');

    expect(bouncer.output()).toMatch(/login attempt: db=latchkey_test_\w+ user=postgres/); // the pools went through it
  }, 30_000);
});
