import { randomBytes } from 'node:crypto';
import { buildTestApp, TEST_MASTER_KEY } from '../helpers';
import { buildPlatform, buildUser } from '../factories';
import { startMailOutboxJob, type MailOutboxJob, type MailOutboxJobOptions } from '../../src/jobs/mail-outbox.job';
import * as outboxRows from '../../src/repositories/mail-outbox.repository';
import { runCommand } from '../../src/cli/commands';
import { ownDatabase } from './own-database';
import { startSmtpSink, SMTP_PASSWORD, SMTP_USER, type SmtpSink } from './smtp-sink';

// A mail is an outbox row written with its event and sent by workers with
// retries; these tests run real SMTP (smtp-server) against apps on a database of their own.
type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

let own: Awaited<ReturnType<typeof ownDatabase>>;
let smtp: SmtpSink;
let a: TestApp; // instance A
let b: TestApp; // instance B, same database
const jobs: MailOutboxJob[] = [];

const FAST: MailOutboxJobOptions = { pollIntervalMs: 100, retryBaseSeconds: 0.2, retryMaxSeconds: 0.4 };
const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: own.url,
  SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`,
  MAIL_MAX_ATTEMPTS: '50',
  ...extra,
});
const instance = (extra: Record<string, string> = {}) => buildTestApp(env(extra), undefined, { mailWorker: false });
const worker = (t: TestApp, options: MailOutboxJobOptions = FAST) => {
  const job = startMailOutboxJob(t.services, t.services.deps.logger, options);
  jobs.push(job);
  return job;
};

beforeAll(async () => {
  own = await ownDatabase();
  smtp = await startSmtpSink();
  a = await instance();
  b = await instance();
});
afterEach(async () => {
  await Promise.all(jobs.splice(0).map((j) => j.stop()));
  await smtp.start(); // up again for the next test
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await smtp?.stop();
  await own?.drop();
});

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const rowsTo = (t: TestApp, email: string) =>
  t.database.db('mail_outbox').where({ recipient: email }).orderBy('created_at');
const receivedBy = (email: string) => smtp.received.filter((m) => m.to.includes(email));

/** A platform and a verified user who asks for a password reset: the mail is queued in the reset's transaction. */
async function resetRequested(t: TestApp) {
  const p = await buildPlatform(t.services, 'Globex Bank');
  const email = `durable-${randomBytes(4).toString('hex')}@example.com`;
  const u = await buildUser(t.services, p.id, { email, emailVerified: true });
  await t.services.account.passwordReset.requestReset(p, u.email);
  return { p, email };
}

describe('durable mail (outbox)', () => {
  it('SMTP down: the mail is kept (queued, tries counted, last error), and sent once SMTP is back', async () => {
    await smtp.stop();
    worker(a);
    const { email } = await resetRequested(a);
    const waiting = await until('two failed tries', async () => {
      const [row] = await rowsTo(a, email);
      return row?.attempts >= 2 && row.status === 'queued' && row;
    });
    expect(waiting.last_error).toMatch(/ECONNREFUSED/);
    expect(waiting.last_error).not.toContain(SMTP_PASSWORD);
    expect(receivedBy(email)).toEqual([]);

    await smtp.start();
    const [mail] = await until(
      'the mail at the SMTP server',
      async () => receivedBy(email).length > 0 && receivedBy(email),
    );
    expect(mail.subject).toBe('Reset your Globex Bank password');
    expect(mail.raw).toMatch(/password\/reset\?platform_guid=/);
    const row = await until('the row marked sent', async () =>
      (await rowsTo(a, email)).find((r) => r.status === 'sent'),
    );
    expect(row.sent_at).toBeInstanceOf(Date);
    expect(row.sealed_body).toBeNull(); // the link is not kept once sent
    expect(receivedBy(email)).toHaveLength(1);
  });

  it('crash between commit and send: a mail committed by an instance that then stopped is sent after restart', async () => {
    const crashed = await instance(); // no worker ran: the process "died" right after the commit
    const { email } = await resetRequested(crashed);
    await crashed.close();
    const [queued] = await rowsTo(a, email);
    expect(receivedBy(email)).toEqual([]);
    expect({ status: queued.status, attempts: queued.attempts }).toEqual({ status: 'queued', attempts: 0 });

    worker(a); // the restarted instance
    const [mail] = await until(
      'the mail at the SMTP server',
      async () => receivedBy(email).length > 0 && receivedBy(email),
    );
    // The one-time link travelled sealed: no column of the stored row carried it.
    const token = /token=([A-Za-z0-9_-]{43})/.exec(mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '='))![1];
    expect(JSON.stringify(queued)).not.toContain(token);
    expect(queued.sealed_body).toMatch(/^v1\./);
    await until('the row marked sent', async () => (await rowsTo(a, email))[0].status === 'sent');
  });

  it('a worker that died while sending: its claim lapses and another instance sends the mail', async () => {
    const { email } = await resetRequested(a);
    const claimed = await outboxRows.claimDue(b.database.db, 100, 2); // B claims, then dies (2 s lease)
    expect(claimed.map((r) => r.recipient)).toContain(email);
    expect(
      (
        await a.services.mailOutbox.deliverDue({
          batchSize: 10,
          leaseSeconds: 30,
          retryBaseSeconds: 1,
          retryMaxSeconds: 1,
        })
      ).claimed,
    ).toBe(0); // still leased

    worker(a);
    await until('the mail at the SMTP server', async () => receivedBy(email).length > 0);
    const row = await until('the row marked sent', async () =>
      (await rowsTo(a, email)).find((r) => r.status === 'sent'),
    );
    expect(row.attempts).toBe(2);
    expect(receivedBy(email)).toHaveLength(1);
  });

  it('exactly once across two instances: each of many mails reaches SMTP once', async () => {
    const p = await buildPlatform(a.services, 'Initech');
    const N = 40;
    const tag = randomBytes(4).toString('hex');
    const to = `many-${tag}@example.com`;
    for (let i = 0; i < N; i++) {
      await a.services.mailOutbox.enqueue(a.database.db, {
        platformId: p.id,
        kind: 'test',
        to: { address: to },
        fromName: 'Initech',
        subject: `mail ${tag} #${i}`,
        text: 'x',
        html: '<p>x</p>',
      });
    }
    const slow = await startSmtpSink({ delayMs: 15 });
    const viaSlow = { SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${slow.port}` };
    const [x, y] = await Promise.all([instance(viaSlow), instance(viaSlow)]);
    try {
      // Small batches and a fast poll: the two workers claim over and over, concurrently.
      const options = { ...FAST, batchSize: 3, pollIntervalMs: 20 };
      worker(x, options);
      worker(y, options);
      await until('every row marked sent', async () => (await rowsTo(a, to)).every((r) => r.status === 'sent'));
      await new Promise((r) => setTimeout(r, 300)); // any duplicate would have arrived by now
      const subjects = slow.received.filter((m) => m.to.includes(to)).map((m) => m.subject);
      expect(subjects.sort()).toEqual(Array.from({ length: N }, (_, i) => `mail ${tag} #${i}`).sort());
      expect((await rowsTo(a, to)).map((r) => r.attempts)).toEqual(Array(N).fill(1));
    } finally {
      await Promise.all(jobs.splice(0).map((j) => j.stop()));
      await x.close();
      await y.close();
      await slow.stop();
    }
  });

  it('dead after MAIL_MAX_ATTEMPTS tries, listed by `admin mail list`, sent after `admin mail retry`', async () => {
    const d = await instance({ MAIL_MAX_ATTEMPTS: '3' });
    try {
      await smtp.stop();
      worker(d);
      const { p, email } = await resetRequested(d);
      const dead = await until('the mail dead', async () => (await rowsTo(d, email)).find((r) => r.status === 'dead'));
      expect(dead.attempts).toBe(3);
      expect(dead.last_error).toMatch(/ECONNREFUSED/);

      const listed = await runCommand(d.services, ['mail', 'list', '--status', 'dead', '--platform', p.id]);
      expect(listed.counts).toEqual(expect.objectContaining({ dead: 1 }));
      expect(listed.mails).toEqual([
        expect.objectContaining({
          id: dead.id,
          platform_guid: p.id,
          kind: 'reset_password',
          to: email,
          status: 'dead',
          attempts: 3,
          next_attempt_at: null,
          sent_at: null,
        }),
      ]);
      expect(JSON.stringify(listed)).not.toMatch(/token=|sealed|password\/reset/); // never the body

      await smtp.start();
      const retried = await runCommand(d.services, ['mail', 'retry', '--id', dead.id]);
      expect(retried).toEqual({
        requeued: 1,
        mails: [expect.objectContaining({ id: dead.id, status: 'queued', attempts: 0 })],
      });
      await until('the mail at the SMTP server', async () => receivedBy(email).length > 0);
      const sent = await until('the row marked sent', async () =>
        (await rowsTo(d, email)).find((r) => r.status === 'sent'),
      );
      expect(sent.attempts).toBe(1);

      // A sent mail (no body left) cannot be retried; unknown or malformed ids are refused plainly.
      await expect(runCommand(d.services, ['mail', 'retry', '--id', dead.id])).rejects.toThrow(
        /is sent: only a dead or queued mail/,
      );
      await expect(
        runCommand(d.services, ['mail', 'retry', '--id', '00000000-0000-4000-8000-000000000000']),
      ).rejects.toThrow(/unknown mail/);
      await expect(runCommand(d.services, ['mail', 'retry', '--id', "1' OR 1=1"])).rejects.toThrow(/unknown mail/);
      await expect(runCommand(d.services, ['mail', 'retry'])).rejects.toThrow(/--id ID or --all-dead/);
      await expect(runCommand(d.services, ['mail', 'list', '--status', 'lost'])).rejects.toThrow(
        /--status must be one of/,
      );
      await expect(runCommand(d.services, ['mail', 'list', '--limit', '0'])).rejects.toThrow(/--limit/);
    } finally {
      await Promise.all(jobs.splice(0).map((j) => j.stop()));
      await d.close();
    }
  });

  it('a recipient the server refuses for good (550 at RCPT) is dead at once; `mail retry --all-dead` requeues it', async () => {
    const { p, email } = await (async () => {
      const platform = await buildPlatform(a.services, 'Globex Bank');
      const address = `refused-${randomBytes(4).toString('hex')}@example.com`;
      smtp.rejecting.add(address);
      const u = await buildUser(a.services, platform.id, { email: address, emailVerified: true });
      worker(a);
      await a.services.account.passwordReset.requestReset(platform, u.email);
      return { p: platform, email: address };
    })();
    const dead = await until('the mail dead', async () => (await rowsTo(a, email)).find((r) => r.status === 'dead'));
    expect(dead.attempts).toBe(1);
    expect(dead.last_error).toMatch(/550/);

    smtp.rejecting.delete(email);
    const out = await runCommand(a.services, ['mail', 'retry', '--all-dead', '--platform', p.id]);
    expect(out.requeued).toBe(1);
    await until('the mail at the SMTP server', async () => receivedBy(email).length > 0);
  });

  it('a mail enqueued in a transaction that rolls back is never sent', async () => {
    worker(a);
    const to = `rolled-back-${randomBytes(4).toString('hex')}@example.com`;
    await expect(
      a.database.db.transaction(async (trx) => {
        await a.services.mailOutbox.enqueue(trx, {
          platformId: null,
          kind: 'test',
          to: { address: to },
          fromName: 'X',
          subject: 'never',
          text: 'x',
          html: 'x',
        });
        throw new Error('the event failed');
      }),
    ).rejects.toThrow('the event failed');
    expect(await rowsTo(a, to)).toEqual([]);
  });

  it('the purge drops sent mails after a week and keeps dead ones for a month', async () => {
    const p = await buildPlatform(a.services);
    const ids: string[] = [];
    for (const status of ['sent', 'dead', 'queued'] as const) {
      const id = await a.services.mailOutbox.enqueue(a.database.db, {
        platformId: p.id,
        kind: 'test',
        to: { address: `purge-${status}@example.com` },
        fromName: 'X',
        subject: status,
        text: 'x',
        html: 'x',
      });
      await a.database
        .db('mail_outbox')
        .where({ id })
        .update({ status, sent_at: status === 'sent' ? a.database.db.fn.now() : null });
      ids.push(id);
    }
    const statuses = async () =>
      await a.database.db('mail_outbox').where({ platform_id: p.id }).orderBy('subject').pluck('status');
    const purgeAt = async (days: number) => {
      const later = await buildTestApp(env(), () => new Date(Date.now() + days * 86_400_000), { mailWorker: false });
      try {
        return await later.services.maintenance.purgeExpired();
      } finally {
        await later.close();
      }
    };
    await purgeAt(6);
    expect(await statuses()).toEqual(['dead', 'queued', 'sent']);
    expect((await purgeAt(8)).mailOutbox).toBeGreaterThanOrEqual(1);
    expect(await statuses()).toEqual(['dead', 'queued']);
    await purgeAt(31);
    expect(await statuses()).toEqual(['queued']); // waiting mail is never purged
    await a.database.db('mail_outbox').whereIn('id', ids).del();
  });

  it('a queued mail survives a MASTER_KEY rotation: `master-key reseal` reseals its body', async () => {
    const { email } = await resetRequested(a); // queued under the current key; no worker runs
    const next = randomBytes(32).toString('base64url');
    const rotating = await instance({ MASTER_KEY: next, MASTER_KEY_PREVIOUS: TEST_MASTER_KEY });
    const rotated = await instance({ MASTER_KEY: next }); // the old key is gone
    try {
      expect(await runCommand(rotating.services, ['master-key', 'reseal'])).toEqual({
        resealed: expect.objectContaining({ 'mail_outbox.sealed_body': expect.any(Number) }),
      });
      worker(rotated);
      await until('the mail at the SMTP server', async () => receivedBy(email).length > 0);
      // The server holds the message before the worker has read its 250 and recorded it: wait for that.
      const row = await until('the row marked sent', async () =>
        (await rowsTo(a, email)).find((r) => r.status === 'sent'),
      );
      expect(row.sealed_body).toBeNull();
    } finally {
      await Promise.all(jobs.splice(0).map((j) => j.stop()));
      // Back under the suite's key (this database's other rows were resealed too).
      const back = await instance({ MASTER_KEY: TEST_MASTER_KEY, MASTER_KEY_PREVIOUS: next });
      await back.services.masterKey.resealAll();
      await Promise.all([rotating.close(), rotated.close(), back.close()]);
    }
  });
});
