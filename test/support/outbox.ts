import { listOutbox, type OutboxEntry } from '../../src/mail/transport';
import path from 'node:path';

/**
 * Waits for a mail to `to` whose subject matches: mail goes through the outbox table and is
 * written here by a worker (buildTestApp runs one), after the response.
 */
export async function waitForMail(
  dataDir: string,
  to: string,
  subject: RegExp,
  timeoutMs = 10_000,
): Promise<OutboxEntry> {
  const dir = path.resolve(dataDir, 'outbox');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await listOutbox(dir, { to, limit: 10_000 })).find((m) => subject.test(m.subject));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject} in ${dir}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every mail to `to` now in the outbox, newest first. */
export async function mailsTo(dataDir: string, to: string): Promise<OutboxEntry[]> {
  return listOutbox(path.resolve(dataDir, 'outbox'), { to, limit: 10_000 });
}

/** The first link of the text part that starts with `prefix` (a path like /verify-email). */
export function linkIn(mail: OutboxEntry, pathPrefix: string): string {
  const url = mail.text.match(/https?:\/\/\S+/g)?.find((u) => new URL(u).pathname === pathPrefix);
  if (!url) throw new Error(`no ${pathPrefix} link in:\n${mail.text}`);
  return url;
}
