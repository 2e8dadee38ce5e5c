import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import * as jose from 'jose';
import type { Express } from 'express';
import type { Services } from '../../src/services';
import * as clientRows from '../../src/repositories/client.repository';

/** One POST the test relying party received. */
export interface ReceivedLogout {
  path: string;
  contentType: string | undefined;
  /** Every form parameter: only logout_token is expected (§2.5). */
  params: Record<string, string>;
  logoutToken: string;
}

/**
 * A relying party's back-channel logout endpoint on 127.0.0.1: records each POST and answers with
 * the next queued status (200 once the queue is empty).
 */
export async function startLogoutRp() {
  const received: ReceivedLogout[] = [];
  const answers: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const params = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      received.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'],
        params,
        logoutToken: params.logout_token,
      });
      res.statusCode = answers.shift() ?? 200;
      res.setHeader('cache-control', 'no-store');
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let n = 0;
  return {
    received,
    /** Statuses for the next POSTs, in order. */
    answerWith: (...statuses: number[]) => answers.push(...statuses),
    /** A fresh endpoint URL (one per client, so each client's POSTs are told apart). */
    endpoint: () => `${base}/backchannel/${++n}`,
    /** The POSTs to one endpoint URL. */
    to: (url: string) => received.filter((r) => `${base}${r.path}` === url),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
export type LogoutRp = Awaited<ReturnType<typeof startLogoutRp>>;

/** Registers the client for back-channel logout at a fresh endpoint of the RP; returns the URL. */
export async function registerBackchannel(
  s: Services,
  rp: LogoutRp,
  client: { id: string; platformId: string },
  sessionRequired = false,
): Promise<string> {
  const uri = rp.endpoint();
  await clientRows.update(s.deps.db, client.platformId, client.id, {
    backchannelLogoutUri: uri,
    backchannelLogoutSessionRequired: sessionRequired,
  });
  return uri;
}

export const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * Verifies a logout token as a relying party does (Back-Channel Logout 1.0 §2.6): signature with
 * the key the RP has, typ, iss, aud, iat/exp, and the claims' shape; returns header and claims.
 */
export async function verifyLogoutToken(
  token: string,
  key: jose.CryptoKey | Uint8Array | jose.JWTVerifyGetKey,
  expected: { issuer: string; audience: string; algorithms: string[] },
) {
  const { payload, protectedHeader } = await jose.jwtVerify(token, key as Parameters<typeof jose.jwtVerify>[1], {
    issuer: expected.issuer,
    audience: expected.audience,
    algorithms: expected.algorithms,
    typ: 'logout+jwt',
    requiredClaims: ['iat', 'exp', 'jti', 'events'],
  });
  expect(protectedHeader.typ).toBe('logout+jwt');
  expect(payload.events).toEqual({ [LOGOUT_EVENT]: {} });
  expect(payload).not.toHaveProperty('nonce'); // §2.4: a logout token must not carry one
  expect(payload.exp! - payload.iat!).toBe(120);
  expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(300);
  expect(payload.jti).toEqual(expect.any(String));
  expect(payload.sub ?? payload.sid).toBeDefined();
  return { header: protectedHeader, claims: payload };
}

/** A standard platform's JWKS as an RP fetches it. */
export async function platformJwks(app: Express, platformId: string) {
  const res = await request(app).get(`/oauth/jwks?platform_guid=${platformId}`).expect(200);
  return jose.createLocalJWKSet(res.body);
}

/** An HS512 key from a client secret, as an RP imports it. */
export const secretKey = (secret: string) => new TextEncoder().encode(secret);
