import request, { type Response } from 'supertest';
import type { Knex } from 'knex';
import type { Express } from 'express';

// The audit tests' client: every request comes through a trusted proxy (TRUST_PROXY=loopback) for
// this address, with this user agent, so each stored event can be checked for both.
export const CLIENT_IP = '203.0.113.77';
export const USER_AGENT = 'AuditTest/1.0 (+https://example.test)';
export const AUDIT_APP_ENV = { TRUST_PROXY: 'loopback' };

/**
 * A cookie-keeping driver like support/browser.ts (usable wherever a Browser is), whose requests
 * all carry CLIENT_IP and USER_AGENT, and which keeps the X-Request-Id of the first answer of each
 * get/submit: the id the events that request caused carry. Same-site redirects are then followed.
 */
export function auditBrowser(app: Express) {
  const agent = request.agent(app);
  agent.set('X-Forwarded-For', CLIENT_IP).set('User-Agent', USER_AGENT);
  let lastHtml = '';
  const unescape = (s: string) =>
    s.replace(/&amp;/g, '&').replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

  async function follow(first: Response): Promise<{ res: Response; location?: string; requestId: string }> {
    const requestId = requestIdOf(first);
    let current = first;
    for (let i = 0; i < 10 && current.status >= 300 && current.status < 400; i++) {
      const location = current.headers.location as string;
      if (!location.startsWith('/')) return { res: current, location, requestId };
      current = await agent.get(location);
    }
    if (current.type === 'text/html') lastHtml = current.text;
    return { res: current, requestId };
  }

  return {
    agent,
    get html() {
      return lastHtml;
    },
    async get(path: string) {
      return follow(await agent.get(path));
    },
    /** Submits the current page's form (by action suffix) with the given fields. */
    async submit(actionSuffix: string, fields: Record<string, string>) {
      const action = [...lastHtml.matchAll(/<form[^>]*action="([^"]+)"/g)]
        .map((m) => unescape(m[1]))
        .find((a) => a.endsWith(actionSuffix));
      if (!action) throw new Error(`no form ending in ${actionSuffix} on the page:\n${lastHtml.slice(0, 3000)}`);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(lastHtml)?.[1] ?? '';
      const restart = /name="restart" value="([^"]+)"/.exec(lastHtml)?.[1];
      return follow(
        await agent
          .post(action)
          .type('form')
          .send({ _csrf: csrf, ...(restart ? { restart: unescape(restart) } : {}), ...fields }),
      );
    },
    pageTitle() {
      return /<h1[^>]*>([\s\S]*?)<\/h1>/
        .exec(lastHtml)?.[1]
        .replace(/<[^>]+>/g, '')
        .trim();
    },
  };
}

export type AuditBrowser = ReturnType<typeof auditBrowser>;

export function requestIdOf(res: Response): string {
  const id = res.headers['x-request-id'];
  if (typeof id !== 'string' || !id) throw new Error('no X-Request-Id on the answer');
  return id;
}

export interface AuditRow {
  id: string;
  occurred_at: Date;
  kind: string;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  platform_id: string | null;
  subject: string | null;
  client_id: string | null;
  source: string | null;
  user_agent: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
}

/** The events one request caused, oldest first. */
export async function eventsOf(db: Knex, requestId: string): Promise<AuditRow[]> {
  return db('audit_events').where({ request_id: requestId }).orderBy('id', 'asc');
}

/** The one event of `kind` one request caused. */
export async function eventOf(db: Knex, requestId: string, kind: string): Promise<AuditRow> {
  const rows = (await eventsOf(db, requestId)).filter((r) => r.kind === kind);
  if (rows.length !== 1)
    throw new Error(
      `expected one ${kind} event for request ${requestId}, found ${rows.length}: ${JSON.stringify(await eventsOf(db, requestId))}`,
    );
  return rows[0];
}

/** Waits for an event written after the answer (password.reset_requested runs once the response is sent). */
export async function eventuallyEventOf(
  db: Knex,
  requestId: string,
  kind: string,
  timeoutMs = 10_000,
): Promise<AuditRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = (await eventsOf(db, requestId)).filter((r) => r.kind === kind);
    if (rows.length > 0 || Date.now() > deadline) return eventOf(db, requestId, kind);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * An event of a user's request: the user is the actor (actor_id = subject), the source and user
 * agent are the driver's, the request id the answer's; and no secret anywhere in the row.
 */
export function expectUserEvent(
  row: AuditRow,
  want: {
    kind: string;
    platformId: string;
    subject: string | null;
    clientId?: string | null;
    requestId: string;
    details?: Record<string, unknown>;
  },
  secrets: Array<string | undefined | null>,
) {
  expect({
    kind: row.kind,
    actor_type: row.actor_type,
    actor_id: row.actor_id,
    platform_id: row.platform_id,
    subject: row.subject,
    client_id: row.client_id,
    source: row.source,
    user_agent: row.user_agent,
    request_id: row.request_id,
  }).toEqual({
    kind: want.kind,
    actor_type: 'user',
    actor_id: want.subject,
    platform_id: want.platformId,
    subject: want.subject,
    client_id: want.clientId ?? null,
    source: CLIENT_IP,
    user_agent: USER_AGENT,
    request_id: want.requestId,
  });
  if (want.details) expect(row.details).toEqual(want.details);
  expect(row.occurred_at).toBeInstanceOf(Date);
  expectNoSecret(row, secrets);
}

/** None of the secrets appears in the row's JSON (nor their lowercase or unformatted spelling). */
export function expectNoSecret(row: unknown, secrets: Array<string | undefined | null>) {
  const json = JSON.stringify(row).toLowerCase();
  for (const secret of secrets) {
    if (!secret) continue;
    const variants = [secret, secret.replace(/[-\s]/g, '')].map((v) => v.toLowerCase()).filter((v) => v.length >= 6);
    for (const v of variants) expect({ secret: v, found: json.includes(v) }).toEqual({ secret: v, found: false });
  }
}
