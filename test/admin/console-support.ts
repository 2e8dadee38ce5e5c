import request from 'supertest';
import type { Express } from 'express';
import type { Services } from '../../src/services';
import { cliActor } from '../../src/domain/admin';
import { totpAt } from '../support/totp';

export const OPERATOR_PASSWORD = 'operator password long enough';

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
export const h1Of = (html: string) =>
  /<h1[^>]*>([\s\S]*?)<\/h1>/
    .exec(html)?.[1]
    .replace(/<[^>]+>/g, '')
    .trim();
export const setupKeyOf = (html: string) => /id="setup-key">([A-Z2-7 ]+)</.exec(html)?.[1].replace(/ /g, '');

/** A new operator through the service the CLI calls. */
export async function buildOperator(s: Services, input: { platformId?: string | null; email?: string } = {}) {
  const email = input.email ?? `op-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const { operator } = await s.operators.create(cliActor(), {
    email,
    platformId: input.platformId ?? null,
    password: OPERATOR_PASSWORD,
  });
  return operator;
}

/** A cookie-keeping client of the console: GET a page, POST its form with the page's CSRF token. */
export function consoleBrowser(app: Express) {
  const agent = request.agent(app);
  let html = '';
  const keep = (res: request.Response) => {
    if (res.type === 'text/html') html = res.text;
    return res;
  };
  return {
    agent,
    get html() {
      return html;
    },
    get: async (path: string) => keep(await agent.get(path)),
    /** Follows 303s within the console; returns the last response. */
    async follow(res: request.Response) {
      let current = res;
      for (let i = 0; i < 5 && current.status === 303; i++) current = keep(await agent.get(current.headers.location));
      return current;
    },
    post: async (path: string, fields: Record<string, string>, csrf = true) =>
      keep(
        await agent
          .post(path)
          .type('form')
          .send({ ...(csrf ? { _csrf: csrfOf(html) } : {}), ...fields }),
      ),
  };
}

export type ConsoleBrowser = ReturnType<typeof consoleBrowser>;

/**
 * Signs `b` in: the password, then the enrolment (first time: the setup key's code) or the code.
 * Returns the secret, which the test keeps as the operator's authenticator app.
 */
export async function signInConsole(b: ConsoleBrowser, email: string, now: () => Date, secret?: string) {
  await b.get('/admin/sign-in');
  const afterPassword = await b.follow(await b.post('/admin/sign-in', { email, password: OPERATOR_PASSWORD }));
  const key = secret ?? setupKeyOf(afterPassword.text);
  if (!key) throw new Error(`no code or setup page after the password:\n${afterPassword.text.slice(0, 1500)}`);
  const action = secret ? '/admin/sign-in/code' : '/admin/sign-in/authenticator';
  const done = await b.post(action, { code: totpAt(key, now()) });
  if (done.status !== 303 || done.headers.location !== '/admin')
    throw new Error(`the code was refused (${done.status}):\n${done.text.slice(0, 1500)}`);
  await b.follow(done);
  return key;
}
