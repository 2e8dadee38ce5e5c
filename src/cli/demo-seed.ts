import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Services } from '../services';

/** Development only: on an empty database, create a demo platform and client and say how to use them. */
export async function seedDemo(s: Services, config: Config, logger: Logger): Promise<void> {
  if ((await s.platforms.count()) === 0) await createDemo(s, config, logger);
}

/** Creates the demo platform and client; their secret goes to DATA_DIR/demo-client.json. */
export async function createDemo(s: Services, config: Config, logger: Logger): Promise<void> {
  const base = config.baseUrl;
  // The provider's own development page plays the app (GET /dev/callback), so the first sign-in
  // ends on a page that shows the code. Plain http redirect URIs must name a loopback IP
  // (RFC 8252 §7.3, §8.3): an http provider is reached there on its own port.
  const appUrl = base.startsWith('http://') ? `http://127.0.0.1:${config.port}` : base;
  const redirectUri = `${appUrl}/dev/callback`;
  const { platform } = await s.platforms.createPlatform('Demo');
  const { client, secret } = await s.platforms.createClient(platform.id, {
    name: 'Demo app',
    type: 'confidential',
    redirectUris: [redirectUri],
    postLogoutRedirectUris: [`${appUrl}/`],
    scopes: 'openid profile email phone address offline_access',
  });
  // The secret never goes to the log: it is written to a 0600 file beside the embedded data.
  const file = path.resolve(config.dataDir, 'demo-client.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const demo = {
    platform_guid: platform.id,
    client_id: client.id,
    client_secret: secret,
    redirect_uri: redirectUri,
    discovery: `${base}/.well-known/openid-configuration?platform_guid=${platform.id}`,
    post_logout_redirect_uri: `${appUrl}/`,
    account_page: `${base}/account?platform_guid=${platform.id}`,
    outbox: `${base}/dev/outbox`,
  };
  fs.writeFileSync(file, JSON.stringify(demo, null, 2), { mode: 0o600 });
  logger.info(
    {
      platform_guid: platform.id,
      client_id: client.id,
      discovery: demo.discovery,
      account_page: demo.account_page,
      outbox: demo.outbox,
      credentials_file: file,
    },
    'created a demo platform and client (development only); its secret is in credentials_file',
  );
}
