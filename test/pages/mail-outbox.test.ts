import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildPlatform, buildUser } from '../factories';
import { createMailTransport } from '../../src/mail/transport';
import { waitForMail } from '../support/outbox';
import { TEST_MASTER_KEY } from '../helpers';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function mailSomeone() {
  const p = await buildPlatform(t.services, 'Globex Bank');
  const u = await buildUser(t.services, p.id, {
    email: `outbox-${Math.random().toString(36).slice(2, 10)}@example.com`,
    emailVerified: true,
  });
  await t.services.account.passwordReset.requestReset(p, u.email);
  return { p, u, mail: await waitForMail(t.config.dataDir, u.email, /Reset your Globex Bank password/) };
}

describe('mail outbox (development)', () => {
  it('writes each mail as RFC 5322 .eml (text and HTML parts) and .json under DATA_DIR/outbox', async () => {
    const { u, mail } = await mailSomeone();
    const eml = fs.readFileSync(path.join(t.config.dataDir, 'outbox', `${mail.id}.eml`), 'utf8');
    expect(eml).toMatch(/^From: Globex Bank <no-reply@issuer\.test>$/m);
    expect(eml).toMatch(new RegExp(`^To: Ada Lovelace <${u.email}>$`, 'm'));
    expect(eml).toMatch(/Content-Type: multipart\/alternative/);
    expect(eml).toMatch(/Content-Type: text\/plain/);
    expect(eml).toMatch(/Content-Type: text\/html/);
    expect(mail.text).toContain('Hello Ada,');
    expect(mail.text).toContain('— Globex Bank');
    expect(mail.html).toContain('Globex Bank');
  });

  it('puts nothing a sender typed into a mail to an address not yet verified (no name in greeting or To)', async () => {
    const p = await buildPlatform(t.services, 'Globex Bank');
    const email = `unverified-${Math.random().toString(36).slice(2, 10)}@example.com`;
    await buildUser(t.services, p.id, { email, givenName: 'Call 555-0100 now', familyName: 'Urgent' });
    await t.services.account.passwordReset.requestReset(p, email);
    const mail = await waitForMail(t.config.dataDir, email, /Reset your Globex Bank password/);
    const eml = fs.readFileSync(path.join(t.config.dataDir, 'outbox', `${mail.id}.eml`), 'utf8');
    expect(eml).toMatch(new RegExp(`^To: ${email}$`, 'm'));
    expect(mail.text).toMatch(/^Hello,$/m);
    for (const text of [eml, mail.text, mail.html]) expect(text).not.toMatch(/555-0100|Urgent/);
  });

  it('lists the outbox at /dev/outbox and shows each mail with clickable links', async () => {
    const { u, mail } = await mailSomeone();
    const list = await request(t.app)
      .get(`/dev/outbox?to=${encodeURIComponent(u.email)}`)
      .expect(200);
    expect(list.text).toContain('Reset your Globex Bank password');
    expect(list.text).toContain(`href="/dev/outbox/${mail.id}"`);
    const one = await request(t.app).get(`/dev/outbox/${mail.id}`).expect(200);
    expect(one.text).toMatch(
      /<a href="http:\/\/issuer\.test\/password\/reset\?platform_guid=[^"]+&amp;token=[^"]+" class="link">/,
    );
    const html = await request(t.app).get(`/dev/outbox/${mail.id}/html`).expect(200);
    expect(html.headers['content-security-policy']).toMatch(/sandbox/);
    expect((await request(t.app).get('/dev/outbox/../../etc/passwd')).status).toBe(404);
    expect((await request(t.app).get('/dev/outbox/1234')).status).toBe(404);
  });

  it('does not exist in production', async () => {
    const prod = await buildTestApp({
      NODE_ENV: 'production',
      BASE_URL: 'https://id.example.com',
      SMTP_URL: 'smtp://127.0.0.1:1',
      MASTER_KEY: TEST_MASTER_KEY,
    });
    try {
      expect(prod.services.account.mail.transport.kind).toBe('smtp');
      const res = await request(prod.app).get('/dev/outbox').set('Accept', 'text/html');
      expect(res.status).toBe(404);
    } finally {
      await prod.close();
    }
  });

  it('uses SMTP when SMTP_URL is set, even in development', () => {
    expect(createMailTransport({ smtpUrl: 'smtp://localhost:2525', dataDir: '/nonexistent', from: 'a@b.c' }).kind).toBe(
      'smtp',
    );
    expect(createMailTransport({ dataDir: '/tmp/x', from: 'a@b.c' }).kind).toBe('outbox');
  });

  it('delivers over SMTP with nodemailer (a local SMTP listener receives the message)', async () => {
    const received = await withSmtpServer(async (port) => {
      const smtp = createMailTransport({
        smtpUrl: `smtp://127.0.0.1:${port}`,
        dataDir: '/nonexistent',
        from: 'no-reply@id.example.com',
      });
      await smtp.send({
        to: { address: 'ada@example.com' },
        fromName: 'Globex Bank',
        subject: 'Hi',
        text: 'plain',
        html: '<p>html</p>',
      });
    });
    expect(received).toMatch(/^Subject: Hi$/m);
    expect(received).toMatch(/^From: Globex Bank <no-reply@id\.example\.com>$/m);
  });
});

/** A minimal SMTP listener (RFC 5321 happy path) that records the DATA of one message. */
async function withSmtpServer(fn: (port: number) => Promise<void>): Promise<string> {
  const net = await import('node:net');
  let data = '';
  const server = net.createServer((socket) => {
    let inData = false;
    let buffer = '';
    socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let i: number;
      while ((i = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            socket.write('250 OK queued\r\n');
          } else data += `${line}\n`;
          continue;
        }
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'EHLO' || cmd === 'HELO') socket.write('250 test\r\n');
        else if (cmd === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (cmd === 'QUIT') {
          socket.write('221 bye\r\n');
          socket.end();
        } else socket.write('250 OK\r\n');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await fn((server.address() as import('node:net').AddressInfo).port);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
  return data;
}
