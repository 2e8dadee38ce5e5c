import path from 'node:path';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { errorHandler } from '../../src/http/errors/error-handler';
import { toOAuthError } from '../../src/http/errors/to-oauth-error';
import { buildTestApp, expectOAuthError } from '../helpers';

// A value Postgres refuses (SQLSTATE class 22) is the request's fault, so it
// is a 400 invalid_request — logged without a stack or the value — never a 500. The errors are real
// ones from the run's database, raised by the statements below.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const REFUSED: [string, string, () => Promise<unknown>][] = [
  ['22P02', 'a malformed uuid', () => t.database.db.raw('select ?::uuid', ['-'.repeat(36)])],
  ['22007', 'a malformed date', () => t.database.db.raw('select ?::date', ['next tuesday'])],
  ['22008', 'a date out of range', () => t.database.db.raw('select ?::date', ['2020-13-45'])],
  ['22003', 'a number out of range', () => t.database.db.raw('select ?::integer', ['99999999999'])],
  ['22021', 'a NUL byte in text', () => t.database.db.raw('select ?::text', ['a\0b'])],
  [
    '22001',
    'a string too long',
    () =>
      t.database.db.transaction(async (trx) => {
        await trx.raw('create temporary table net_22001 (v varchar(2)) on commit drop');
        await trx.raw('insert into net_22001 values (?)', ['secret-value']);
      }),
  ],
];

const refusal = async (raise: () => Promise<unknown>) => {
  const err = await raise().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeDefined();
  return err as Error & { code?: string };
};

describe('SQLSTATE class 22 (the database refused a value from the request)', () => {
  it.each(REFUSED)('%s, %s, maps to 400 invalid_request without its text', async (sqlState, _label, raise) => {
    const err = await refusal(raise);
    expect(err.code).toBe(sqlState);
    const mapped = toOAuthError(err);
    expect([mapped.code, mapped.status]).toEqual(['invalid_request', 400]);
    expect(mapped.description).not.toMatch(/uuid|date|integer|varying|UTF8|select|insert/i);
  });

  it('other SQL errors stay 500 server_error (a bug of ours, not bad input)', async () => {
    const err = await refusal(() => t.database.db.raw('select * from no_such_table_for_the_net'));
    expect(toOAuthError(err).status).toBe(500);
  });

  /** A small app behind the one error middleware, whose handler runs a refused statement. */
  function appRaising(raise: () => Promise<unknown>) {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const app = express();
    app.set('view engine', 'ejs');
    app.set('views', path.resolve(__dirname, '..', '..', 'views'));
    app.get(['/oauth/thing', '/account/thing'], async () => {
      await raise();
    });
    app.use(errorHandler(pino({ level: 'debug' }, sink)));
    return { app, lines };
  }

  it.each(REFUSED)(
    '%s over HTTP: JSON 400, the styled page 400 on hosted pages, a warning without stack or value',
    async (sqlState, _label, raise) => {
      const { app, lines } = appRaising(raise);
      expectOAuthError(await request(app).get('/oauth/thing'), 400, 'invalid_request');
      const page = await request(app).get('/account/thing').set('Accept', 'text/html');
      expect([page.status, page.type]).toEqual([400, 'text/html']);
      expect(page.text).toContain('This request could not be completed');
      expect(lines).toHaveLength(2);
      for (const line of lines) {
        expect(line).toMatchObject({ level: 40, status: 400, code: 'invalid_request', sqlState });
        const text = JSON.stringify(line);
        expect(text).not.toMatch(/\bat \S+ \(|stack/);
        expect(text).not.toMatch(/-{36}|next tuesday|2020-13-45|99999999999|secret-value|\\u0000/);
      }
    },
  );
});
