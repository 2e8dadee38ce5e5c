import request from 'supertest';
import type { Express } from 'express';
import type { Services } from '../../src/services';
import { buildCode } from '../factories';

/** A code built for the user (buildCode), exchanged at the token endpoint with the client's secret: the token response. */
export async function tokensForCode(
  app: Express,
  services: Services,
  o: {
    p: { id: string };
    c: { id: string; name: string; redirectUris: string[]; secret: string | null };
    u: { id: string };
    scopes?: string[];
  },
) {
  const code = await buildCode(services, { platformId: o.p.id, client: o.c, user: o.u, scopes: o.scopes });
  const res = await request(app)
    .post('/oauth/token')
    .auth(o.c.id, o.c.secret!)
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: o.c.redirectUris[0], platform_guid: o.p.id })
    .expect(200);
  return res.body;
}

type Caller = { p: { id: string }; c: { id: string; secret: string | null } };

/** POST `endpoint` (introspect or revoke) for `token`, authenticated as the client with its secret; expects 200. */
export const asClient = (app: Express, endpoint: 'introspect' | 'revoke', { p, c }: Caller, token: string) =>
  request(app)
    .post(`/oauth/${endpoint}`)
    .auth(c.id, c.secret!)
    .type('form')
    .send({ token, platform_guid: p.id })
    .expect(200);
