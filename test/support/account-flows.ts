import request from 'supertest';
import type { Express } from 'express';
import { TEST_PASSWORD } from '../factories';
import type { Browser } from './browser';

type Platform = { id: string };
type Client = { id: string; redirectUris: string[]; secret: string | null };

export const authorizeQuery = (p: Platform, c: Client, extra: Record<string, string> = {}) =>
  new URLSearchParams({
    platform_guid: p.id,
    response_type: 'code',
    client_id: c.id,
    redirect_uri: c.redirectUris[0],
    scope: 'openid profile email phone address offline_access',
    state: 's-1',
    ...extra,
  });

/** The value of a hidden or text input on the driver's current page. */
export const inputValue = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];

/** Authorize → sign up → allow; the callback URL. */
export async function signUpThrough(b: Browser, p: Platform, c: Client, email: string, password = TEST_PASSWORD) {
  await b.get(`/oauth/authorize?${authorizeQuery(p, c, { action: 'register' })}`);
  await b.submit('/signup', {
    email,
    given_name: 'Grace',
    family_name: 'Hopper',
    birthdate: '1990-05-17',
    phone_number: '',
    password,
  });
  const done = await b.submit('/consent', { decision: 'allow' });
  if (!done.location) throw new Error(`no callback after sign-up:\n${b.html.slice(0, 2000)}`);
  return done.location;
}

/** Authorize → sign in (through the chooser's "another account" if shown) → allow if asked; the callback URL. */
export async function signInThrough(
  b: Browser,
  p: Platform,
  c: Client,
  email: string,
  password = TEST_PASSWORD,
  extra: Record<string, string> = {},
) {
  let step = await b.get(`/oauth/authorize?${authorizeQuery(p, c, extra)}`);
  if (step.location) return step.location;
  if (b.pageTitle() === 'Choose an account') await b.submit('/chooser', { another: '1' });
  step = await b.submit('/signin', { email, password });
  if (!step.location && b.pageTitle()?.includes('wants to access'))
    step = await b.submit('/consent', { decision: 'allow' });
  if (!step.location) throw new Error(`no callback after sign-in:\n${b.html.slice(0, 2000)}`);
  return step.location;
}

export const basic = (c: Client) =>
  `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret!)}`).toString('base64')}`;

/** The callback's code exchanged for tokens. */
export async function exchange(app: Express, p: Platform, c: Client, callback: string) {
  const code = new URL(callback).searchParams.get('code');
  const res = await request(app)
    .post('/oauth/token')
    .set('Authorization', basic(c))
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id });
  if (res.status !== 200) throw new Error(`token exchange: ${res.status} ${res.text}`);
  return res.body as { access_token: string; id_token: string; refresh_token?: string };
}

export async function refresh(app: Express, p: Platform, c: Client, refreshToken: string) {
  return request(app)
    .post('/oauth/token')
    .set('Authorization', basic(c))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken, platform_guid: p.id });
}

export async function userinfo(app: Express, p: Platform, accessToken: string) {
  return request(app).get(`/oauth/userinfo?platform_guid=${p.id}`).set('Authorization', `Bearer ${accessToken}`);
}

/** Signs in on the account page's own sign-in form. */
export async function accountSignIn(b: Browser, p: Platform, email: string, password = TEST_PASSWORD) {
  await b.get(`/account/signin?platform_guid=${p.id}`);
  return b.submit(`/account/signin?platform_guid=${p.id}`, { email, password });
}

export const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

export const jwtPayload = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
