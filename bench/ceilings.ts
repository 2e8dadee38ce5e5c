// The ceilings: a bare node:http server and a bare Express 5 app, each in its own child
// process (so RSS and CPU are separate), answering {"ok":true} to any method and path.
import path from 'node:path';
import { form } from './lib/http';
import type { RowSpec } from './lib/load';
import { ROWS, type RowName, type Target } from './lib/oidc';
import { startChild, stopChild, waitForLine } from './lib/proc';

/** Request shapes the ceilings are measured with; each OIDC row maps to one of them. */
export const CEILING_GET: RowSpec = {
  kind: 'static',
  method: 'GET',
  path: '/bench?x=1',
  headers: { accept: 'application/json' },
};
export const CEILING_POST: RowSpec = {
  kind: 'static',
  method: 'POST',
  path: '/bench',
  headers: {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    authorization: 'Basic YmVuY2g6YmVuY2g=',
  },
  body: form({
    grant_type: 'refresh_token',
    refresh_token: 'rt_' + 'x'.repeat(43),
    platform_guid: '00000000-0000-0000-0000-000000000000',
  }),
};
export const CEILING_SHAPE: Record<RowName, 'GET' | 'POST' | null> = {
  discovery: 'GET',
  jwks: 'GET',
  userinfo: 'GET',
  introspection: 'POST',
  refresh: 'POST',
  code: 'POST',
  signin: null, // a multi-request browser flow has no single-request ceiling
  client_credentials: 'POST',
  token_exchange: 'POST',
};

async function startOne(name: 'node' | 'express', file: string, label: string): Promise<Target> {
  const child = startChild(name, process.execPath, [path.join(__dirname, 'servers', file)], { ipc: true });
  const port = Number(await waitForLine(child, 'LISTENING ', 20_000));
  const rows: Target['rows'] = {};
  for (const r of ROWS) {
    const shape = CEILING_SHAPE[r];
    rows[r] =
      shape === 'GET'
        ? CEILING_GET
        : shape === 'POST'
          ? CEILING_POST
          : { kind: 'na', reason: 'no single-request ceiling for a multi-step flow' };
  }
  return { name, label, base: `http://127.0.0.1:${port}`, pid: child.pid, rows, stop: () => stopChild(child) };
}

export async function startCeilings(): Promise<Target[]> {
  return Promise.all([
    startOne('express', 'bare-express.mjs', 'bare Express 5'),
    startOne('node', 'bare-http.mjs', 'bare node:http'),
  ]);
}
