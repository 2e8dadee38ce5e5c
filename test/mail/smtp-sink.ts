import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  subject: string;
  raw: string;
}

export interface SmtpSink {
  port: number;
  /** Everything accepted so far, in order. */
  received: ReceivedMail[];
  /** Listens again on the same port (after stop: the server "comes back"). */
  start(): Promise<void>;
  /** Closes the port: connections are refused, as when the mail server is down. */
  stop(): Promise<void>;
  /** Recipients answered 550 at RCPT TO. */
  rejecting: Set<string>;
}

export const SMTP_USER = 'mailer';
export const SMTP_PASSWORD = 'smtp-s3cret-pass';

/**
 * A real SMTP server (nodemailer's smtp-server) on a loopback port, requiring the test's
 * credentials; each accepted message is recorded. `delayMs` holds each DATA before accepting it,
 * so that the senders of several workers overlap; `stall` never answers DATA (a send that hangs).
 */
export async function startSmtpSink(options: { delayMs?: number; stall?: boolean } = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const rejecting = new Set<string>();
  let server: SMTPServer | undefined;
  let port = 0;

  const create = () =>
    new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      disableReverseLookup: true,
      closeTimeout: 1000,
      onAuth(auth, _session, cb) {
        if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) cb(null, { user: auth.username });
        else cb(new Error('Invalid username or password'));
      },
      onRcptTo(address, _session, cb) {
        if (rejecting.has(address.address)) {
          const err = Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 });
          return cb(err);
        }
        cb();
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (options.stall) return;
          const raw = Buffer.concat(chunks).toString('utf8');
          const subject = /^Subject: (.*)$/m.exec(raw)?.[1] ?? '';
          setTimeout(() => {
            received.push({ to: session.envelope.rcptTo.map((r) => r.address), subject, raw });
            cb();
          }, options.delayMs ?? 0);
        });
      },
    });

  const sink: SmtpSink = {
    get port() {
      return port;
    },
    received,
    rejecting,
    async start() {
      if (server) return;
      const s = create();
      const listening = s.listen(port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => {
        listening.once('listening', resolve);
        listening.once('error', reject);
      });
      server = s;
      port = (listening.address() as AddressInfo).port;
    },
    async stop() {
      const s = server;
      server = undefined;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
  await sink.start();
  return sink;
}
