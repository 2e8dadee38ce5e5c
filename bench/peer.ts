// The peer: oidc-provider v9 in a child process (bench/servers/peer-server.mjs), driven
// through its real authorization + interaction flow to pre-issue codes and tokens.
import path from 'node:path';
import { OidcDriver, type Target } from './lib/oidc';
import { clientCredentialsBody, postRow } from './machines';
import { startChild, stopChild, waitForLine } from './lib/proc';

interface PeerInfo {
  port: number;
  issuer: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  scope: string;
  resource: string;
  email: string;
  password: string;
  sub: string;
}

export async function startPeer(): Promise<Target> {
  const child = startChild('peer', process.execPath, [path.join(__dirname, 'servers', 'peer-server.mjs')], {
    ipc: true,
  });
  const info = JSON.parse(await waitForLine(child, 'READY ', 60_000)) as PeerInfo;
  const driver = new OidcDriver({
    base: info.issuer,
    paths: {
      discovery: '/.well-known/openid-configuration',
      jwks: '/jwks',
      authorize: '/auth',
      token: '/token',
      userinfo: '/me',
      introspect: '/token/introspection',
    },
    tenant: {},
    clientId: info.client_id,
    clientSecret: info.client_secret,
    redirectUri: info.redirect_uri,
    scope: info.scope,
    creds: { email: info.email, password: info.password },
  });
  const target: Target = {
    name: 'peer',
    label: 'oidc-provider',
    base: info.issuer,
    pid: child.pid,
    rows: {},
    stop: () => stopChild(child),
    notes: driver.notes,
    driver,
  };
  try {
    target.rows = await driver.rows();
    // The same client, the same resource URI and scope as Latchkey's row; no token exchange (oidc-provider has none).
    target.rows.client_credentials = await postRow(info.issuer, '/token', driver.basic, clientCredentialsBody());
    target.rows.token_exchange = { kind: 'na', reason: 'oidc-provider implements no token exchange (RFC 8693)' };
  } catch (err) {
    await stopChild(child);
    throw new Error(`peer setup failed: ${(err as Error).message}\n${child.output.slice(-20).join('\n')}`, {
      cause: err,
    });
  }
  return target;
}

if (require.main === module) {
  // Smoke test: npx tsx bench/peer.ts
  (async () => {
    const t = await startPeer();
    const d = t.rows;
    console.log('peer up at', t.base, 'rows:', Object.keys(d).join(', '));
    if (d.code?.kind === 'pool') console.log('minted codes:', (await d.code.mint(5)).length);
    if (d.refresh?.kind === 'pool') console.log('minted refresh tokens:', (await d.refresh.mint(5)).length);
    if (d.signin?.kind === 'flow') {
      const s = performance.now();
      await d.signin.run();
      console.log(`full sign-in ok in ${(performance.now() - s).toFixed(1)} ms`);
    }
    await t.stop();
  })().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
