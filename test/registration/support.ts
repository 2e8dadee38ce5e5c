import request from 'supertest';
import type { Express } from 'express';
import type { Services } from '../../src/services';
import { cliActor } from '../../src/domain/admin';
import type { RegistrationPolicy } from '../../src/domain/platform';

/** A standard platform with the registration policy given (and, for `token`, no token yet). */
export async function registrationPlatform(s: Services, registration: RegistrationPolicy) {
  const { platform } = await s.platforms.createPlatform(
    `DCR ${Math.random().toString(36).slice(2, 8)}`,
    undefined,
    'standard',
  );
  if (registration !== 'off') await s.admin.platforms.update(cliActor(), platform.id, { registration });
  return platform.id;
}

/** An initial access token of the platform, in clear. */
export async function initialToken(
  s: Services,
  platformId: string,
  input: { max_uses?: number; expires_in?: number } = {},
) {
  const { token, registrationToken } = await s.admin.registrationTokens.create(cliActor(), platformId, input);
  return { token, id: registrationToken.id };
}

/** POST /oauth/register for the platform, JSON unless `raw` sends a string as it is. */
export function register(
  app: Express,
  platformId: string,
  body: unknown,
  opts: { token?: string; contentType?: string; raw?: string } = {},
) {
  const req = request(app).post(`/oauth/register?platform_guid=${platformId}`);
  if (opts.token) req.set('Authorization', `Bearer ${opts.token}`);
  if (opts.raw !== undefined) return req.set('Content-Type', opts.contentType ?? 'application/json').send(opts.raw);
  return req.set('Content-Type', opts.contentType ?? 'application/json').send(JSON.stringify(body));
}

/** The path of a registration_client_uri, reached by the query form until the issuer's path form routes here. */
export const configurationPath = (platformId: string, clientId: string) =>
  `/oauth/register/${clientId}?platform_guid=${platformId}`;

export const countClients = async (db: { (table: string): any }, platformId: string) =>
  Number((await db('clients').where({ platform_id: platformId }).count('* as n').first()).n);

export const WEB_APP = { redirect_uris: ['https://app.example.com/callback'], client_name: 'Example App' };
