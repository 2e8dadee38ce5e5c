import fs from 'node:fs';
import path from 'node:path';
import { Router } from 'express';
import { z } from 'zod';
import type { Config } from '../../config';
import { renderPage } from '../pages/render';

/** What `seedDemo` wrote to DATA_DIR/demo-client.json (development only). */
const DemoClient = z.object({
  platform_guid: z.string(),
  client_id: z.string(),
  redirect_uri: z.string(),
  discovery: z.string(),
  account_page: z.string(),
});
type DemoClient = z.infer<typeof DemoClient>;

function readDemoClient(config: Config): DemoClient | undefined {
  try {
    return DemoClient.parse(JSON.parse(fs.readFileSync(path.resolve(config.dataDir, 'demo-client.json'), 'utf8')));
  } catch {
    return undefined; // no demo seeded (or a hand-edited file): the page simply shows no demo links
  }
}

/**
 * `GET /`: what this server is, with its endpoints; in development also the demo's sign-in link,
 * account page and outbox. `GET /dev/callback`: the demo client's redirect URI, a
 * page that shows the code and how to exchange it, so a first sign-in never ends on "connection refused".
 */
export function homeRouter(config: Config): Router {
  const r = Router();
  r.get('/', (_req, res) => {
    // in the language of Accept-Language (views/home.ejs)
    const demo = config.isProduction ? undefined : readDemoClient(config);
    const demoSignIn =
      demo &&
      `/oauth/authorize?${new URLSearchParams({
        platform_guid: demo.platform_guid,
        response_type: 'code',
        client_id: demo.client_id,
        redirect_uri: demo.redirect_uri,
        scope: 'openid profile email offline_access',
        state: 'demo',
      })}`;
    renderPage(res, 'home', {
      title: 'Latchkey',
      platformName: null,
      baseUrl: config.baseUrl,
      isProduction: config.isProduction,
      demo,
      demoSignIn,
    });
  });

  if (!config.isProduction) {
    r.get('/dev/callback', (req, res) => {
      const q = (name: string) =>
        typeof req.query[name] === 'string' ? (req.query[name] as string).slice(0, 2048) : undefined;
      const demo = readDemoClient(config);
      renderPage(res, 'dev-callback', {
        title: 'Demo app callback',
        platformName: 'Development',
        code: q('code'),
        state: q('state'),
        error: q('error'),
        errorDescription: q('error_description'),
        demo,
        tokenEndpoint: `${config.baseUrl}/oauth/token`,
        dataDir: config.dataDir,
      });
    });
  }
  return r;
}
