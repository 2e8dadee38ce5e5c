import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform } from '../factories';

// The HTML error page speaks the page's language (heading, message, hint, button),
// keeps a technical English description as a marked detail, and shows the request id; the JSON
// error_description of the spec endpoints stays English whatever Accept-Language says.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_SCALE: '0.05', TRUST_PROXY: 'loopback' });
});
afterAll(() => t.close());

const html = (path: string, language: string) =>
  request(t.app).get(path).set('Accept', 'text/html').set('Accept-Language', language);
const unescape = (s: string) => s.replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/&#34;/g, '"');

it('an unknown app in German: translated framing, no English description, a button to /, the request id', async () => {
  const p = await buildPlatform(t.services);
  const res = await html(
    `/oauth/authorize?platform_guid=${p.id}&client_id=00000000-0000-4000-8000-000000000000&redirect_uri=https://x.example/cb`,
    'de-DE,de;q=0.9',
  );
  expect(res.status).toBe(400);
  expect(res.headers['content-language']).toBe('de');
  const text = unescape(res.text);
  expect(text).toContain('<html lang="de">');
  expect(text).toContain('Fehler 400');
  expect(text).toContain('Diese Anfrage konnte nicht ausgeführt werden');
  expect(text).toContain(
    'Die Anwendung, die Sie hierher geschickt hat, ist bei diesem Anmeldedienst nicht registriert.',
  );
  expect(text).not.toContain('not registered with this sign-in service');
  expect(text).toMatch(/<a href="\/" class="btn btn-primary btn-block">Zur Startseite<\/a>/);
  expect(text).toContain(`Anfrage-ID: <code class="copyable"`);
  expect(text).toContain(`>${res.headers['x-request-id']}</code>`);
});

it('ui_locales wins over Accept-Language; a technical error shows its English description, marked as English', async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const res = await html(`/oauth/authorize?platform_guid=${p.id}&client_id=${c.id}&ui_locales=es`, 'de');
  expect(res.status).toBe(400);
  const text = unescape(res.text);
  expect(text).toContain('<html lang="es">');
  expect(text).toContain('El enlace que le ha traído aquí está incompleto.');
  expect(text).toContain('Detalles técnicos: <span lang="en">The request has no redirect_uri.</span>');
});

it("a bad redirect_uri links back to the app's registered home page, never to the redirect_uri", async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id, { name: 'Acme Notes' });
  await t.database.db('clients').where({ id: c.id }).update({ client_uri: 'https://notes.example/' });
  const res = await html(
    `/oauth/authorize?platform_guid=${p.id}&client_id=${c.id}&redirect_uri=https://evil.example/cb&response_type=code&scope=openid`,
    'fr',
  );
  const text = unescape(res.text);
  expect(text).toContain('<a href="https://notes.example/" class="btn btn-primary btn-block">Retour à Acme Notes</a>');
  expect(text).not.toContain('evil.example');
});

it('the 404 page and the rate-limit page in French; JSON errors stay English', async () => {
  const notFound = await html('/account/nothing-here', 'fr-CA');
  expect(notFound.status).toBe(404);
  expect(unescape(notFound.text)).toContain('Page introuvable');
  expect(unescape(notFound.text)).toContain('Il n’y a rien à cette adresse.');

  const from = `2001:db8:${randomBytes(2).toString('hex')}::1`;
  let refused;
  for (let i = 0; i < 40 && refused?.status !== 429; i++)
    refused = await html('/interaction/unknown', 'fr').set('X-Forwarded-For', from);
  expect(refused!.status).toBe(429);
  const seconds = Number(refused!.headers['retry-after']);
  expect(unescape(refused!.text)).toContain(
    `Trop de requêtes depuis votre réseau. Réessayez dans ${seconds} ${seconds === 1 ? 'seconde' : 'secondes'}.`,
  );
  expect(refused!.text).toContain('<html lang="fr">');

  const json = await request(t.app)
    .get('/oauth/nothing')
    .set('Accept', 'application/json')
    .set('Accept-Language', 'de');
  expect(json.status).toBe(404);
  expect(json.body.error_description).toMatch(/^No endpoint GET/);
  const token = await request(t.app)
    .post('/oauth/token')
    .set('Accept-Language', 'de')
    .type('form')
    .send({ grant_type: 'nope' });
  expect(token.body.error_description).toMatch(/^[\x20-\x7e]+$/); // English (ASCII), whatever the language asked for
});
