import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { buildTestApp, TEST_ENV, TEST_MASTER_KEY } from '../helpers';
import { buildPlatform, buildUser } from '../factories';
import { startProvider } from '../support/provider-process';
import { ownDatabase } from './own-database';
import { startSmtpSink, SMTP_PASSWORD, SMTP_USER, type SmtpSink } from './smtp-sink';

// The provider process (src/main.ts, what `npm start` runs) sends the outbox: a mail survives the
// process being killed before or while sending it.
let own: Awaited<ReturnType<typeof ownDatabase>>;
let smtp: SmtpSink;
let hung: SmtpSink; // accepts the message but never answers its DATA
let dataDir: string;
beforeAll(async () => {
  own = await ownDatabase();
  smtp = await startSmtpSink();
  hung = await startSmtpSink({ stall: true });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-mail-provider-'));
});
afterAll(async () => {
  await smtp?.stop();
  await hung?.stop();
  await own?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const smtpUrl = (sink: SmtpSink) => `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${sink.port}`;
const providerEnv = (sink: SmtpSink) => ({
  DATABASE_URL: own.url,
  DATA_DIR: dataDir,
  NODE_ENV: 'development',
  DEMO_SEED: 'false',
  LOG_LEVEL: 'warn',
  MASTER_KEY: TEST_MASTER_KEY,
  SESSION_SECRET: TEST_ENV.SESSION_SECRET,
  RATE_LIMIT_SCALE: '0',
  SMTP_URL: smtpUrl(sink),
});

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('a mail committed just before a crash is sent by the next provider; one killed mid-send is sent again after its lease', async () => {
  // The event commits with its mail, then the process "dies" before any worker sends it.
  const t = await buildTestApp({ DATABASE_URL: own.url, SMTP_URL: smtpUrl(smtp) }, undefined, { mailWorker: false });
  const email = `restart-${randomBytes(4).toString('hex')}@example.com`;
  try {
    const p = await buildPlatform(t.services, 'Globex Bank');
    await buildUser(t.services, p.id, { email, emailVerified: true });
    await t.services.account.passwordReset.requestReset(p, email);
    const row = () => t.database.db('mail_outbox').where({ recipient: email }).first();
    expect(await row()).toEqual(expect.objectContaining({ status: 'queued', attempts: 0 }));

    // A provider whose SMTP server hangs takes the mail and is killed in the middle of sending it.
    const doomed = await startProvider(providerEnv(hung));
    await until('the mail claimed', async () => (await row()).status === 'sending');
    doomed.child.kill('SIGKILL');
    await doomed.stop();
    expect(await row()).toEqual(expect.objectContaining({ status: 'sending', attempts: 1 }));
    // Its lease (5 minutes) runs out; written here rather than waited for.
    await t.database.db('mail_outbox').where({ recipient: email }).update({ next_attempt_at: t.database.db.fn.now() });

    const next = await startProvider(providerEnv(smtp));
    try {
      const [mail] = await until('the mail at the SMTP server', async () => {
        const got = smtp.received.filter((m) => m.to.includes(email));
        return got.length > 0 && got;
      });
      expect(mail.subject).toBe('Reset your Globex Bank password');
      await until('the row marked sent', async () => (await row()).status === 'sent');
      expect(await row()).toEqual(expect.objectContaining({ status: 'sent', attempts: 2, sealed_body: null }));
      expect(smtp.received.filter((m) => m.to.includes(email))).toHaveLength(1);
    } finally {
      await next.stop();
    }
  } finally {
    await t.close();
  }
}, 120_000);
