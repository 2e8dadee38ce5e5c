import fs from 'node:fs/promises';
import path from 'node:path';
import type * as Nodemailer from 'nodemailer';
import { randomToken } from '../crypto/random';

/** One outgoing mail: plain text and HTML, sent in the name of a platform. */
export interface MailMessage {
  to: { name?: string; address: string };
  /** Display name of the sender: the platform's name (mails are branded per platform). */
  fromName: string;
  subject: string;
  text: string;
  html: string;
}

/** What the development outbox keeps of a mail (next to the RFC 5322 `.eml`). */
export interface OutboxEntry {
  id: string;
  date: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailTransport {
  kind: 'smtp' | 'outbox';
  /** The outbox directory when mail is written to disk. */
  outboxDir?: string;
  send(message: MailMessage): Promise<void>;
}

const OUTBOX_ID = /^\d{13}-[A-Za-z0-9_-]{8}$/;

/**
 * SMTP_URL → nodemailer's SMTP transport. Otherwise (never in production, config.ts refuses it)
 * nodemailer builds the very same MIME message and it is written to DATA_DIR/outbox as
 * `<id>.eml` plus `<id>.json`, so every flow works without a mail server.
 */
/** nodemailer, loaded at the first mail rather than at every start. */
const mailer = () => require('nodemailer') as typeof Nodemailer;

export function createMailTransport(options: { smtpUrl?: string; dataDir: string; from: string }): MailTransport {
  const from = (m: MailMessage) => ({ name: m.fromName, address: options.from });
  const envelope = (m: MailMessage) => ({ from: from(m), to: m.to, subject: m.subject, text: m.text, html: m.html });
  if (options.smtpUrl) {
    // Bounded, so a hung server fails the attempt well within the outbox worker's lease
    // (nodemailer's defaults wait up to 2 minutes to connect and 10 minutes on a silent socket).
    // Options written in the URL's query string still win.
    let smtp: Nodemailer.Transporter | undefined;
    return {
      kind: 'smtp',
      send: async (m) => {
        smtp ??= mailer().createTransport({
          url: options.smtpUrl,
          connectionTimeout: 15_000,
          greetingTimeout: 15_000,
          socketTimeout: 60_000,
        });
        await smtp.sendMail(envelope(m));
      },
    };
  }
  const outboxDir = path.resolve(options.dataDir, 'outbox');
  let stream: Nodemailer.Transporter | undefined;
  return {
    kind: 'outbox',
    outboxDir,
    async send(m) {
      stream ??= mailer().createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
      const info = await stream.sendMail(envelope(m));
      const id = `${Date.now()}-${randomToken(6)}`;
      const entry: OutboxEntry = {
        id,
        date: new Date().toISOString(),
        from: `${m.fromName} <${options.from}>`,
        to: m.to.address,
        subject: m.subject,
        text: m.text,
        html: m.html,
      };
      await fs.mkdir(outboxDir, { recursive: true });
      await fs.writeFile(path.join(outboxDir, `${id}.eml`), info.message as Buffer);
      // Written under a temporary name and renamed, so a reader never sees half a file.
      const tmp = path.join(outboxDir, `.${id}.json.tmp`);
      await fs.writeFile(tmp, JSON.stringify(entry, null, 2));
      await fs.rename(tmp, path.join(outboxDir, `${id}.json`));
    },
  };
}

/** The outbox, newest first; `to` keeps only mail to that address. */
export async function listOutbox(
  outboxDir: string,
  options: { limit?: number; to?: string } = {},
): Promise<OutboxEntry[]> {
  let files: string[];
  try {
    files = await fs.readdir(outboxDir);
  } catch {
    return [];
  }
  const ids = files
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .filter((id) => OUTBOX_ID.test(id))
    .sort()
    .reverse();
  const limit = options.limit ?? 200;
  const to = options.to?.toLowerCase();
  const out: OutboxEntry[] = [];
  for (let i = 0; i < ids.length && out.length < limit; i += 50) {
    const batch = await Promise.all(ids.slice(i, i + 50).map((id) => readOutboxEntry(outboxDir, id)));
    for (const e of batch) if (e && (!to || e.to.toLowerCase() === to) && out.length < limit) out.push(e);
  }
  return out;
}

export async function readOutboxEntry(outboxDir: string, id: string): Promise<OutboxEntry | undefined> {
  if (!OUTBOX_ID.test(id)) return undefined;
  try {
    return JSON.parse(await fs.readFile(path.join(outboxDir, `${id}.json`), 'utf8')) as OutboxEntry;
  } catch {
    return undefined;
  }
}
