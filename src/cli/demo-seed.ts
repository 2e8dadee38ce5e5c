import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Services } from '../services';
import * as platforms from '../repositories/platform.repository';

/** Development only: on an empty database, create a demo platform and client and say how to use them. */
export async function seedDemo(s: Services, logger: Logger): Promise<void> {
  if ((await platforms.count(s.deps.db)) > 0) return;
  const base = s.deps.config.baseUrl;
  const { platform } = await s.platforms.createPlatform('Demo');
  const { client, secret } = await s.platforms.createClient(platform.id, {
    name: 'Demo app',
    type: 'confidential',
    redirectUris: ['http://127.0.0.1:8080/callback'],
    postLogoutRedirectUris: ['http://127.0.0.1:8080/'],
    scopes: 'openid profile email phone address offline_access',
  });
  // The secret never goes to the log: it is written to a 0600 file beside the embedded data.
  const file = path.resolve(s.deps.config.dataDir, 'demo-client.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const demo = {
    platform_guid: platform.id,
    client_id: client.id,
    client_secret: secret,
    redirect_uri: 'http://127.0.0.1:8080/callback',
    discovery: `${base}/.well-known/openid-configuration?platform_guid=${platform.id}`,
    post_logout_redirect_uri: 'http://127.0.0.1:8080/',
    account_page: `${base}/account?platform_guid=${platform.id}`,
    outbox: `${base}/dev/outbox`,
  };
  fs.writeFileSync(file, JSON.stringify(demo, null, 2), { mode: 0o600 });
  logger.info(
    { platform_guid: platform.id, client_id: client.id, discovery: demo.discovery, account_page: demo.account_page, outbox: demo.outbox, credentials_file: file },
    'created a demo platform and client (development only); its secret is in credentials_file',
  );
}
