import { buildTestApp } from '../helpers';
import { register, registrationPlatform, WEB_APP } from './support';

// A self-registered client that never completes a token request is purged after
// UNUSED_REGISTERED_CLIENT_TTL_SECONDS. The clock starts in January 2001, so the purge, which
// runs over the shared database, can only ever delete this test's clients.
let clock = new Date('2001-01-01T00:00:00Z').getTime();
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ UNUSED_REGISTERED_CLIENT_TTL_SECONDS: String(7 * 86400) }, () => new Date(clock));
});
afterAll(() => t.close());

const exists = async (id: string) => Boolean(await t.database.db('clients').where({ id }).first());
const days = (n: number) => {
  clock += n * 86_400_000;
};

describe('purge of never-used self-registered clients', () => {
  it("deletes an unused one past the TTL; keeps one that was used, one still young, and operators' clients", async () => {
    const guid = await registrationPlatform(t.services, 'open');
    const unused = (await register(t.app, guid, WEB_APP)).body;
    const used = (await register(t.app, guid, WEB_APP)).body;
    expect(unused.client_id_issued_at).toBe(Date.parse('2001-01-01T00:00:00Z') / 1000);
    const operators = (
      await t.services.platforms.createClient(guid, {
        name: 'Ops',
        type: 'confidential',
        redirectUris: ['https://ops.example/cb'],
        scopes: 'openid',
      })
    ).client;
    await t.database
      .db('clients')
      .where({ id: operators.id })
      .update({ created_at: new Date(clock) });
    days(1);
    await t.services.registration.markFirstUse(
      await t.services.admin.clients.get({ actorType: 'cli', platformId: null }, guid, used.client_id),
    );
    expect((await t.database.db('clients').where({ id: used.client_id }).first()).last_used_at).toEqual(
      new Date(clock),
    );
    days(5);
    const young = (await register(t.app, guid, WEB_APP)).body;

    days(1.5); // the first two are 7.5 days old, the young one 1.5
    const removed = await t.services.maintenance.purgeExpired();
    expect(removed.unusedRegisteredClients).toBe(1);
    expect(await exists(unused.client_id)).toBe(false);
    expect(await exists(used.client_id)).toBe(true);
    expect(await exists(young.client_id)).toBe(true);
    expect(await exists(operators.id)).toBe(true);
  });
});
