import express from 'express';
import knex from 'knex';
import request from 'supertest';
import { healthRouter } from '../../src/http/ops/health.router';
import { probe } from '../../src/repositories/maintenance.repository';
import { buildTestApp } from '../helpers';

// /readyz said ready while every page answered 500 "relation platforms does not exist":
// `select 1` needs no table. Readiness now reads a real table through the app's own connection.
describe('GET /readyz', () => {
  it('is ready when the app sees its tables', async () => {
    const t = await buildTestApp();
    try {
      const res = await request(t.app).get('/readyz');
      expect([res.status, res.body]).toEqual([200, { status: 'ready' }]);
      expect(res.headers['cache-control']).toBe('no-store');
    } finally {
      await t.close();
    }
  });

  it('is 503 when the database answers but the app cannot see its tables', async () => {
    // A connection whose search_path misses the schema: what a foreign session setting did.
    const blind = knex({ client: 'pg', connection: process.env.TEST_DATABASE_URL, searchPath: ['no_such_schema'] });
    try {
      expect((await blind.raw('select 1 as ok')).rows).toEqual([{ ok: 1 }]); // the database itself answers
      const res = await request(express().use(healthRouter('0.0.0-test', () => probe(blind)))).get('/readyz');
      expect([res.status, res.body.error]).toEqual([503, 'temporarily_unavailable']);
    } finally {
      await blind.destroy();
    }
  });
});
