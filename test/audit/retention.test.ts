import pino from 'pino';
import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { startPurgeJob } from '../../src/jobs/purge.job';
import { AUDIT_APP_ENV, auditBrowser, eventOf, eventsOf } from './support';

// Retention: the purge job drops audit events older than AUDIT_RETENTION_DAYS and says
// how many in its log line. The clock lives in 2004-2005, so this purge can only reach events of
// that time (this test's), whatever other suites keep in the shared database; purge.test.ts's
// clock (2001) reaches nothing later than January 2000.
let clock = new Date('2004-01-01T00:00:00Z').getTime();
const now = () => new Date(clock);

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ ...AUDIT_APP_ENV, AUDIT_RETENTION_DAYS: '30' }, now);
});
afterAll(() => t.close());

/** A failed sign-in on the account page (an unknown email: no account needed); the request id of its event. */
async function failedSignIn(platformId: string): Promise<string> {
  const b = auditBrowser(t.app);
  await b.get(`/account/signin?platform_guid=${platformId}`);
  const step = await b.submit(`/account/signin?platform_guid=${platformId}`, {
    email: `nobody-${Math.random().toString(36).slice(2)}@example.com`,
    password: 'not a real one',
  });
  expect(step.res.status).toBe(400);
  await eventOf(t.database.db, step.requestId, 'sign_in.failed');
  return step.requestId;
}

describe('audit retention', () => {
  it('the purge job removes events older than AUDIT_RETENTION_DAYS, keeps newer ones, and logs the count', async () => {
    const p = await buildPlatform(t.services, 'Acme Retention');
    const old = await failedSignIn(p.id); // 2004-01-01
    clock = new Date('2004-02-10T00:00:00Z').getTime();
    const recent = await failedSignIn(p.id); // 2004-02-10
    clock = new Date('2004-02-15T00:00:00Z').getTime(); // 30 days back: 2004-01-16

    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const job = startPurgeJob(t.services, logger, 3600);
    job.stop();
    await job.run();

    expect(await eventsOf(t.database.db, old)).toEqual([]);
    expect(await eventsOf(t.database.db, recent)).toHaveLength(1);
    const purged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'purged expired rows');
    expect(purged?.removed.auditEvents).toBeGreaterThanOrEqual(1);

    // Once the newer one is past the retention too, it goes on the next run.
    clock = new Date('2004-03-12T00:00:00Z').getTime();
    expect(await t.services.audit.purge()).toBeGreaterThanOrEqual(1);
    expect(await eventsOf(t.database.db, recent)).toEqual([]);
  });
});
