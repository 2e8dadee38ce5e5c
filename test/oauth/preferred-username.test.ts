// The spec lists only middle_name and nickname as absent when unset: preferred_username is
// always released with `profile`, so every user has one from creation on.
import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { exchange, jwtPayload, signUpThrough, userinfo } from '../support/account-flows';
import { runCommand } from '../../src/cli/commands';
import { checkPreferredUsername, defaultPreferredUsername } from '../../src/services/user-rules';
import { up as backfill } from '../../migrations/20261123130000_backfill_users_preferred_username';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function tenant() {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  return { p, c };
}

/** userinfo and ID-token claims of a code issued for `scopes`. */
async function claimsOf(
  p: { id: string },
  c: Awaited<ReturnType<typeof buildClient>>,
  user: { id: string },
  scopes: string[],
) {
  const code = await buildCode(t.services, { platformId: p.id, client: c, user, scopes });
  const tokens = await request(t.app)
    .post('/oauth/token')
    .auth(c.id, c.secret!)
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id })
    .expect(200);
  return {
    userinfo: (await userinfo(t.app, p, tokens.body.access_token)).body,
    idToken: jwtPayload(tokens.body.id_token),
  };
}

describe('preferred_username is always released with profile', () => {
  it('a factory user: derived from the name, in userinfo and the ID token', async () => {
    const { p, c } = await tenant();
    const u = await buildUser(t.services, p.id, { givenName: 'Ada', familyName: 'Lovelace' });
    const { userinfo: info, idToken } = await claimsOf(p, c, u, ['openid', 'profile']);
    expect(info.preferred_username).toBe('ada.lovelace');
    expect(idToken.preferred_username).toBe('ada.lovelace');
  });

  it('is not released without profile', async () => {
    const { p, c } = await tenant();
    const u = await buildUser(t.services, p.id);
    const { userinfo: info, idToken } = await claimsOf(p, c, u, ['openid', 'email']);
    expect(info).not.toHaveProperty('preferred_username');
    expect(idToken).not.toHaveProperty('preferred_username');
  });

  it('a user who signed up through the hosted pages', async () => {
    const { p, c } = await tenant();
    const tokens = await exchange(
      t.app,
      p,
      c,
      await signUpThrough(browser(t.app), p, c, `signup-${Date.now()}@example.com`),
    );
    expect((await userinfo(t.app, p, tokens.access_token)).body.preferred_username).toBe('grace.hopper');
    expect(jwtPayload(tokens.id_token).preferred_username).toBe('grace.hopper');
  });

  it('a user created with the CLI: derived, or chosen with --preferred-username', async () => {
    const { p, c } = await tenant();
    const args = (email: string) => [
      'user',
      'create',
      '--platform',
      p.id,
      '--email',
      email,
      '--password',
      TEST_PASSWORD,
      '--given-name',
      'Grace',
      '--family-name',
      'Hopper',
      '--birthdate',
      '1990-01-01',
    ];
    const derived = await runCommand(t.services, args(`cli-a-${Date.now()}@example.com`));
    const chosen = await runCommand(t.services, [
      ...args(`cli-b-${Date.now()}@example.com`),
      '--preferred-username',
      'Amazing_Grace',
    ]);
    expect(
      (await claimsOf(p, c, { id: derived.sub as string }, ['openid', 'profile'])).userinfo.preferred_username,
    ).toBe('grace.hopper');
    const both = await claimsOf(p, c, { id: chosen.sub as string }, ['openid', 'profile']);
    expect(both.userinfo.preferred_username).toBe('Amazing_Grace');
    expect(both.idToken.preferred_username).toBe('Amazing_Grace');
  });

  it.each([
    ['two words', /cannot contain spaces/],
    ['ada@example.com', /letters, digits/],
    ['a'.repeat(65), /at most 64/],
    ['', /Enter a username/],
    ['._-', /at least one letter or digit/],
  ])('the CLI refuses --preferred-username %j and creates nothing', async (value, message) => {
    const { p } = await tenant();
    const email = `cli-bad-${Math.random().toString(36).slice(2)}@example.com`;
    await expect(
      runCommand(t.services, [
        'user',
        'create',
        '--platform',
        p.id,
        '--email',
        email,
        '--password',
        TEST_PASSWORD,
        '--given-name',
        'A',
        '--family-name',
        'B',
        '--birthdate',
        '1990-01-01',
        '--preferred-username',
        value,
      ]),
    ).rejects.toThrow(new RegExp(`preferred_username: .*${message.source}`));
    expect(await t.services.users.findByEmail(p.id, email)).toBeUndefined();
  });
});

describe('the stored column', () => {
  it('is NOT NULL and no user is without one after the migrations', async () => {
    const column = await t.database
      .db('information_schema.columns')
      .where({ table_name: 'users', column_name: 'preferred_username' })
      .first();
    expect(column.is_nullable).toBe('NO');
    const [{ n }] = await t.database.db('users').whereNull('preferred_username').count('* as n');
    expect(Number(n)).toBe(0);
  });

  it('the migration backfills a user stored without one from the name, and bumps updated_at', async () => {
    const p = await buildPlatform(t.services);
    const rolledBack = new Error('roll back');
    await expect(
      t.database.db.transaction(async (trx) => {
        // As before the migration: a nullable column and a user without a username.
        await trx.raw('ALTER TABLE users ALTER COLUMN preferred_username DROP NOT NULL');
        const id = '00000000-0000-4000-8000-00000000e011';
        await trx('users').insert({
          id,
          platform_id: p.id,
          email: 'old@example.com',
          email_normalized: 'old@example.com',
          password_hash: 'x',
          given_name: 'José',
          family_name: "O'Brien Núñez",
          preferred_username: null,
          updated_at: new Date('2020-01-01T00:00:00Z'),
        });
        await backfill(trx);
        const row = await trx('users').where({ id }).first();
        expect(row.preferred_username).toBe('josé.o-brien-núñez');
        expect(row.updated_at.getTime()).toBeGreaterThan(new Date('2021-01-01T00:00:00Z').getTime());
        const column = await trx('information_schema.columns')
          .where({ table_name: 'users', column_name: 'preferred_username' })
          .first();
        expect(column.is_nullable).toBe('NO');
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
  });
});

describe('the rules', () => {
  it.each([
    ['Ada', 'Lovelace', 'ada.lovelace'],
    ['Mary Ann', "O'Brien", 'mary-ann.o-brien'],
    ['José', 'Núñez', 'josé.núñez'],
    ['张', '伟', '张.伟'],
    ['!!!', '???', 'user'],
    ['A', '', 'a'],
    ['Ｆｕｌｌ', 'Width', 'full.width'],
    ['x'.repeat(60), 'y'.repeat(60), 'x'.repeat(60) + '.yyy'],
    ['x'.repeat(63), 'y', 'x'.repeat(63)],
  ])('derives a valid default from %j %j', (given, family, expected) => {
    const derived = defaultPreferredUsername(given, family);
    expect(derived).toBe(expected);
    expect(checkPreferredUsername(derived)).toBeUndefined();
  });

  it.each([['ada'], ['Ada_L'], ['ada.lovelace-1815'], ['Łukasz'], ['ελένη'], ['a'.repeat(64)]])(
    'accepts %j',
    (value) => {
      expect(checkPreferredUsername(value)).toBeUndefined();
    },
  );

  it.each([
    [''],
    ['   '],
    ['two words'],
    ['tab\there'],
    ['ada@example.com'],
    ['a/b'],
    ['rtl\u202eevil'],
    ['zero\u200bwidth'],
    ['a'.repeat(65)],
    ['---'],
  ])('refuses %j', (value) => {
    expect(checkPreferredUsername(value)).toEqual(expect.any(String));
  });
});
