import type { Server } from 'node:http';
import request from 'supertest';
import { createAppServer } from '../../src/http/server';
import { buildTestApp } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';

/**
 * What the fuzz tests share: one app listening once (requests reuse kept-alive connections, so
 * ten thousand of them take seconds, not minutes), the live fixtures generated requests point at,
 * and the count of requests sent and of 5xx answers, which the suite asserts on.
 *
 * Rate limits: the limiters run (and parse credentials) but never refuse (scale 1000). Their
 * counters are shared with the other suites, so every request — setup included — comes from this
 * run's own source address (RFC 2544 benchmarking range), through the trusted loopback proxy.
 */
export const FUZZ_IP = `198.18.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

export interface Live {
  platform: string;
  client: string;
  secret: string;
  publicClient: string;
  redirect: string;
  user: string;
  code: string;
  /** A browser in the middle of an authorization (no account yet): its cookie, interaction and CSRF token. */
  cookie: string;
  iid: string;
  csrf: string;
  /** A browser signed in as `user`: on the account page, and with an authorization waiting at the chooser. */
  accountCookie: string;
  accountCsrf: string;
  chooserIid: string;
}

export const stats = { sent: 0, serverErrors: 0 };

export async function startFuzzApp() {
  const t = await buildTestApp({ RATE_LIMIT_SCALE: '1000', TRUST_PROXY: 'loopback' });
  // The production server (its clientError answers what Node's parser refuses, as main.ts serves it).
  const server: Server = await new Promise((resolve) => {
    const s = createAppServer(t.app).listen(0, '127.0.0.1', () => resolve(s));
  });
  const agent = () => request(server);
  const from = <T extends request.Test>(req: T) => req.set('X-Forwarded-For', FUZZ_IP);

  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const pub = await buildClient(t.services, p.id, { type: 'public', name: 'Public app' });
  const u = await buildUser(t.services, p.id);
  const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
  const authorize = new URLSearchParams({
    platform_guid: p.id,
    response_type: 'code',
    client_id: c.id,
    redirect_uri: c.redirectUris[0],
    scope: 'openid',
  });
  const cookieOf = (res: request.Response) => String(res.headers['set-cookie']?.[0] ?? '').split(';')[0];
  const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1];
  const iidOf = (location: string) => /\/interaction\/([^/"?]+)/.exec(location)![1];

  // A live browser interaction, so random form posts reach the hosted pages' handlers.
  const start = await from(agent().get(`/oauth/authorize?${authorize}`));
  const cookie = cookieOf(start);
  const page = await from(agent().get(start.headers.location).set('Cookie', cookie));

  // A second browser signs in on the account page, then starts an authorization: the chooser lists the account.
  const signin = await from(agent().get(`/account/signin?platform_guid=${p.id}`));
  let accountCookie = cookieOf(signin);
  const signedIn = await from(
    agent().post(`/account/signin?platform_guid=${p.id}`).type('form').set('Cookie', accountCookie),
  ).send({ _csrf: csrfOf(signin.text), email: u.email, password: TEST_PASSWORD });
  accountCookie = cookieOf(signedIn) || accountCookie;
  const account = await from(agent().get(`/account?platform_guid=${p.id}`).set('Cookie', accountCookie));
  const start2 = await from(agent().get(`/oauth/authorize?${authorize}`).set('Cookie', accountCookie));
  const chooser = await from(agent().get(start2.headers.location).set('Cookie', accountCookie));
  if (!account.text.includes(u.email) || !chooser.text.includes(u.email))
    throw new Error('the signed-in fuzz browser did not reach the account page and the chooser');

  const live: Live = {
    platform: p.id,
    client: c.id,
    secret: c.secret!,
    publicClient: pub.id,
    redirect: c.redirectUris[0],
    user: u.id,
    code,
    cookie,
    iid: iidOf(start.headers.location),
    csrf: csrfOf(page.text),
    accountCookie,
    accountCsrf: csrfOf(account.text),
    chooserIid: iidOf(start2.headers.location),
  };
  if (!/^latchkey\.sid=/.test(cookie) || !/^latchkey\.sid=/.test(accountCookie)) throw new Error('no session cookie');
  return {
    t,
    live,
    baseUrl: t.config.baseUrl,
    /** A request to the listening app, counted, from this run's address (garbage left of it in X-Forwarded-For). */
    send(method: Method, url: string, forwardedFor?: string) {
      stats.sent++;
      return agent()
        [method](url)
        .set('X-Forwarded-For', forwardedFor === undefined ? FUZZ_IP : `${forwardedFor}, ${FUZZ_IP}`)
        .ok(() => true);
    },
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await t.close();
    },
  };
}

export type Method = 'get' | 'post' | 'put' | 'delete' | 'patch' | 'head' | 'options';
export type FuzzApp = Awaited<ReturnType<typeof startFuzzApp>>;

/** Hostile values, written as they travel on the wire; none may come back raw in HTML. */
export const HOSTILE_HTML = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>'];
export const HOSTILE_SQL = ["' OR 1=1--", "'; DROP TABLE users; --"];
const LEAKS =
  /\bat \S+ \(.*:\d+:\d+\)|node_modules|syntax error at or near|invalid input syntax|\bselect\b.+\bfrom\b|ECONNREFUSED|TypeError|ReferenceError/i;

/**
 * The properties every answer keeps: no 5xx (counted), errors in the spec's JSON shape or the HTML
 * page, no stack, SQL or hostile markup in the body. Throws naming `where` and what is wrong.
 * (Plain checks rather than expect(): a matcher captures a stack trace per call, which is most of
 * the test's own CPU time over ten thousand requests.)
 */
export function checkAnswer(where: string, method: string, res: request.Response) {
  if (res.status >= 500) stats.serverErrors++;
  const wrong: string[] = [];
  if (res.status >= 500) wrong.push('a server error');
  const type = String(res.headers['content-type'] ?? '');
  const isError = res.status >= 400 && method !== 'head';
  if (isError && !/^(application\/json|text\/html)/.test(type)) wrong.push(`an error as ${type || 'no content type'}`);
  if (isError && type.startsWith('application/json')) {
    const keys = Object.keys(res.body ?? {})
      .sort()
      .join(',');
    if (keys !== 'error,error_description') wrong.push(`error keys ${keys}`);
    else if (typeof res.body.error !== 'string' || typeof res.body.error_description !== 'string')
      wrong.push('error fields that are not strings');
    if (res.headers['x-content-type-options'] !== 'nosniff') wrong.push('no X-Content-Type-Options: nosniff');
  }
  const text = res.text ?? '';
  if (type.startsWith('text/html')) {
    for (const hostile of [...HOSTILE_HTML, ...HOSTILE_SQL])
      if (text.includes(hostile)) wrong.push(`echoed ${hostile}`);
  }
  const leak = LEAKS.exec(text)?.[0];
  if (leak) wrong.push(`leaked "${leak}"`);
  if (wrong.length) throw new Error(`${where} → ${res.status}: ${wrong.join('; ')}\n${text.slice(0, 500)}`);
}
