import request from 'supertest';
import { buildTestApp } from '../helpers';
import { cliActor } from '../../src/domain/admin';
import { registrationPlatform } from './support';

// registration_endpoint in a standard platform's metadata only while registration is token or open.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ BASE_URL: 'https://issuer.test' });
});
afterAll(() => t.close());

const discovery = async (guid: string) =>
  (await request(t.app).get(`/platforms/${guid}/.well-known/openid-configuration`).expect(200)).body;
const authServer = async (guid: string) =>
  (await request(t.app).get(`/.well-known/oauth-authorization-server/platforms/${guid}`).expect(200)).body;

describe('discovery: registration_endpoint', () => {
  it('absent while off; {issuer}/oauth/register under token and open (both discovery paths); gone again when off', async () => {
    const guid = await registrationPlatform(t.services, 'off');
    expect(await discovery(guid)).not.toHaveProperty('registration_endpoint');
    for (const policy of ['token', 'open'] as const) {
      await t.services.admin.platforms.update(cliActor(), guid, { registration: policy });
      expect((await discovery(guid)).registration_endpoint).toBe(
        `https://issuer.test/platforms/${guid}/oauth/register`,
      );
      expect((await authServer(guid)).registration_endpoint).toBe(
        `https://issuer.test/platforms/${guid}/oauth/register`,
      );
    }
    await t.services.admin.platforms.update(cliActor(), guid, { registration: 'off' });
    expect(await discovery(guid)).not.toHaveProperty('registration_endpoint');
  });

  it("a seed platform's document has no registration_endpoint and the same members as before", async () => {
    const { platform } = await t.services.platforms.createPlatform('Seed discovery');
    const body = (
      await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${platform.id}`).expect(200)
    ).body;
    expect(body).not.toHaveProperty('registration_endpoint');
    expect(Object.keys(body)).toHaveLength(30); // the members it had before registration existed
  });
});
