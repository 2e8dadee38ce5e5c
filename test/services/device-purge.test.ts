import { randomUUID } from 'node:crypto';
import { buildTestApp } from '../helpers';
import { buildClient, buildStandardPlatform } from '../factories';
import { normalizeUserCode, formatUserCode } from '../../src/domain/device-authorization';

// Device authorizations (RFC 8628) are purged with the expired codes: a day after they expire, so a
// late poll still hears expired_token. The purge runs with a clock in 1999, where only this test's
// rows live, so it never touches what other suites keep in the shared database.
const NOW = new Date('1999-06-15T00:00:00Z');
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({}, () => NOW);
});
afterAll(() => t.close());

it('deletes device authorizations a day after they expired, and keeps the others', async () => {
  const platform = await buildStandardPlatform(t.services);
  const client = await buildClient(t.services, platform.id, { type: 'public' });
  const d = { platform, client };
  const row = (expiresAt: string) => ({
    id: randomUUID(),
    device_code_hash: randomUUID(),
    user_code_hash: randomUUID(),
    platform_id: d.platform.id,
    client_id: d.client.id,
    scope: 'openid',
    expires_at: new Date(expiresAt),
    interval_seconds: 5,
  });
  const gone = row('1999-06-13T00:00:00Z');
  const keptForLatePolls = row('1999-06-14T12:00:00Z');
  const live = row('1999-06-15T00:10:00Z');
  await t.database.db('device_authorizations').insert([gone, keptForLatePolls, live]);
  const removed = await t.services.maintenance.purgeExpired();
  expect(removed.deviceAuthorizations).toBeGreaterThanOrEqual(1);
  const left = await t.database.db('device_authorizations').where({ platform_id: d.platform.id }).pluck('id');
  expect(left.sort()).toEqual([keptForLatePolls.id, live.id].sort());
});

describe('user codes (RFC 8628 §6.1)', () => {
  it.each([
    ['BCDF-GHJK', 'BCDFGHJK'],
    ['bcdfghjk', 'BCDFGHJK'],
    [' bcdf ghjk ', 'BCDFGHJK'],
    ['BCDF–GHJK', 'BCDFGHJK'], // an en dash, as a phone keyboard may type it
  ])('reads %j as %s', (typed, code) => {
    expect(normalizeUserCode(typed)).toBe(code);
    expect(formatUserCode(code)).toBe('BCDF-GHJK');
  });

  it.each(['BCDF-GHJ', 'BCDF-GHJKL', 'ABCD-EFGH', 'BCDF-GHJ1', ''])('refuses %j', (typed) => {
    expect(normalizeUserCode(typed)).toBeUndefined();
  });
});
