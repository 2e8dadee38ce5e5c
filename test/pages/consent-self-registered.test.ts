// A client that registered itself (RFC 7591) gets a consent page that says so: the host it comes from,
// its name and logo marked as supplied by the app and not checked by the platform, and a caution when
// every redirect goes to a loopback address. No policy skips its consent; the person's own remembered
// grant for that client counts. An operator's client keeps its page as it was.
import { buildTestApp } from '../helpers';
import { buildClient, buildUser, TEST_PASSWORD } from '../factories';
import { browser, type Browser } from '../support/browser';
import { register, registrationPlatform } from '../registration/support';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'; // any 43-character S256 challenge
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

const LOOPBACK_APP = {
  client_name: 'Local Agent',
  application_type: 'native',
  token_endpoint_auth_method: 'none',
  redirect_uris: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
};
const WEB_APP = {
  client_name: 'Web Agent',
  redirect_uris: ['https://agent.example.com/callback'],
  client_uri: 'https://www.agent-home.example/',
  logo_uri: 'https://cdn.agent.example/logo.png',
};

async function registered(platformId: string, metadata: Record<string, unknown>) {
  const res = await register(t.app, platformId, metadata);
  expect(res.status).toBe(201);
  return res.body.client_id as string;
}

async function platformWithUser() {
  const platformId = await registrationPlatform(t.services, 'open');
  const platformName = (await t.services.platforms.findPlatform(platformId))!.name;
  const user = await buildUser(t.services, platformId);
  return { platformId, platformName, user };
}

const authorizePath = (platformId: string, clientId: string, redirectUri: string, extra: Record<string, string> = {}) =>
  `/oauth/authorize?${new URLSearchParams({ platform_guid: platformId, response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'openid email', state: 's', code_challenge: CHALLENGE, code_challenge_method: 'S256', ...extra })}`;

/** Authorize, signing in when asked; the browser is left on the page that follows (consent, or the callback). */
async function authorizeAs(b: Browser, path: string, email: string) {
  let step = await b.get(path);
  if (step.location) return step;
  if (b.pageTitle() === 'Choose an account') step = await b.submit('/chooser', { another: '1' });
  if (/action="[^"]*\/signin"/.test(b.html)) step = await b.submit('/signin', { email, password: TEST_PASSWORD });
  return step;
}

it('a loopback-only client: its host, the name marked as supplied by the app, and the caution in a note', async () => {
  const { platformId, platformName, user } = await platformWithUser();
  const clientId = await registered(platformId, LOOPBACK_APP);
  const b = browser(t.app);
  await authorizeAs(b, authorizePath(platformId, clientId, 'http://127.0.0.1:49152/callback'), user.email);
  expect(b.pageTitle()).toBe('Local Agent wants to access your account');
  const page = text(b.html);
  expect(page).toContain('App address: 127.0.0.1');
  expect(page).not.toContain('49152'); // the host, not the port the app happened to get
  expect(page).toContain(
    `This app registered itself. Its name was supplied by the app and has not been checked by ${platformName}.`,
  );
  expect(b.html).toMatch(
    /<div class="alert alert-error self-registered-warning" role="note">\s*<p><strong>Caution:<\/strong> This app runs on this device\. Continue only if you started it yourself just now\.<\/p>/,
  );
  // Right after the heading block, before the scopes; the form and its buttons as before.
  expect(b.html.indexOf('self-registered-client')).toBeGreaterThan(b.html.indexOf('consent-not-you'));
  expect(b.html.indexOf('self-registered-client')).toBeLessThan(b.html.indexOf('scope-list'));
  expect(b.html).toContain('value="allow"');
});

it('a public client registered with http://localhost by name: the same caution', async () => {
  const { platformId, user } = await platformWithUser();
  const clientId = await registered(platformId, {
    client_name: 'MCP Client',
    token_endpoint_auth_method: 'none',
    redirect_uris: ['http://localhost/callback'],
  });
  const b = browser(t.app);
  await authorizeAs(b, authorizePath(platformId, clientId, 'http://localhost:6274/callback'), user.email);
  expect(text(b.html)).toContain('App address: localhost');
  expect(b.html).toContain('class="alert alert-error self-registered-warning" role="note"');
});

it('an https client: the host of its client_uri, name and logo marked, no loopback caution', async () => {
  const { platformId, platformName, user } = await platformWithUser();
  const clientId = await registered(platformId, WEB_APP);
  const b = browser(t.app);
  await authorizeAs(b, authorizePath(platformId, clientId, 'https://agent.example.com/callback'), user.email);
  expect(b.pageTitle()).toBe('Web Agent wants to access your account');
  const page = text(b.html);
  expect(page).toContain('App address: www.agent-home.example');
  expect(page).toContain(`Its name and logo were supplied by the app and have not been checked by ${platformName}.`);
  expect(b.html).toContain('class="app-logo" src="https://cdn.agent.example/logo.png"');
  expect(b.html).not.toContain('self-registered-warning');
  expect(page).not.toContain('runs on this device');
});

it('without client_uri, the host of the redirect URI in use', async () => {
  const { platformId, user } = await platformWithUser();
  const clientId = await registered(platformId, {
    client_name: 'Bare Agent',
    redirect_uris: ['https://bare.example.net/cb', 'http://127.0.0.1/cb'],
    application_type: 'native',
    token_endpoint_auth_method: 'none',
  });
  const b = browser(t.app);
  await authorizeAs(b, authorizePath(platformId, clientId, 'https://bare.example.net/cb'), user.email);
  expect(text(b.html)).toContain('App address: bare.example.net');
  expect(b.html).not.toContain('self-registered-warning'); // one redirect leaves the device
});

it("an operator's client on the same platform: the consent page carries none of these marks", async () => {
  const { platformId, user } = await platformWithUser();
  const c = await buildClient(t.services, platformId, {
    name: 'Operator App',
    redirectUris: ['http://127.0.0.1/callback'],
  });
  const b = browser(t.app);
  await authorizeAs(b, authorizePath(platformId, c.id, 'http://127.0.0.1/callback'), user.email);
  expect(b.pageTitle()).toBe('Operator App wants to access your account');
  expect(b.html).not.toContain('self-registered');
  const page = text(b.html);
  for (const s of ['App address', 'registered itself', 'runs on this device']) expect(page).not.toContain(s);
});

describe('consent is never skipped by policy', () => {
  it("asked even when the person allowed another of the platform's apps; their own remembered grant counts; another person is asked", async () => {
    const { platformId, user } = await platformWithUser();
    const operatorApp = await buildClient(t.services, platformId, { name: 'Operator App' });
    const b = browser(t.app);
    await authorizeAs(b, authorizePath(platformId, operatorApp.id, operatorApp.redirectUris[0]), user.email);
    expect((await b.submit('/consent', { decision: 'allow' })).location).toMatch(
      /^https:\/\/app\.example\/callback\?code=/,
    );

    const clientId = await registered(platformId, WEB_APP);
    const path = authorizePath(platformId, clientId, 'https://agent.example.com/callback');
    await authorizeAs(b, path, user.email);
    expect(b.pageTitle()).toBe('Web Agent wants to access your account');
    expect((await b.submit('/consent', { decision: 'allow' })).location).toMatch(
      /^https:\/\/agent\.example\.com\/callback\?code=/,
    );

    // The same person, the same client, the same scopes: already approved (past the chooser).
    await b.get(path);
    expect(b.pageTitle()).toBe('Choose an account');
    expect((await b.submit('/chooser', { account: user.id })).location).toMatch(
      /^https:\/\/agent\.example\.com\/callback\?code=/,
    );
    // prompt=consent asks again.
    await b.get(authorizePath(platformId, clientId, 'https://agent.example.com/callback', { prompt: 'consent' }));
    await b.submit('/chooser', { account: user.id });
    expect(b.pageTitle()).toBe('Web Agent wants to access your account');

    const other = await buildUser(t.services, platformId);
    const b2 = browser(t.app);
    await authorizeAs(b2, path, other.email);
    expect(b2.pageTitle()).toBe('Web Agent wants to access your account');
  });
});

it('in German (ui_locales=de): the address, the mark and the caution', async () => {
  const { platformId, platformName, user } = await platformWithUser();
  const clientId = await registered(platformId, LOOPBACK_APP);
  const b = browser(t.app);
  await authorizeAs(
    b,
    authorizePath(platformId, clientId, 'http://[::1]:50123/callback', { ui_locales: 'de' }),
    user.email,
  );
  expect(b.pageTitle()).toBe('Local Agent möchte auf Ihr Konto zugreifen');
  const page = text(b.html);
  expect(page).toContain('Adresse der App: [::1]');
  expect(page).toContain(
    `Diese App hat sich selbst registriert. Ihren Namen hat die App selbst angegeben; ${platformName} hat ihn nicht geprüft.`,
  );
  expect(page).toContain(
    'Vorsicht: Diese App läuft auf diesem Gerät. Fahren Sie nur fort, wenn Sie sie gerade eben selbst gestartet haben.',
  );
  expect(page).not.toContain('runs on this device');
});
