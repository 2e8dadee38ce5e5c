// The chooser, consent, second-factor and upstream pages speak the authorization's
// language (ui_locales, then Accept-Language), and the consent page shows the app's own branding.
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser, type Browser } from '../support/browser';
import { authorizeQuery } from '../support/account-flows';
import { totpAt } from '../support/totp';
import * as clientsRepo from '../../src/repositories/client.repository';

let clock = Date.now();
const now = () => new Date(clock);
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({}, now);
});
afterAll(() => t.close());

async function tenant() {
  const p = await buildPlatform(t.services, 'Acme Travel');
  const c = await buildClient(t.services, p.id, { name: 'Trip Planner' });
  const u = await buildUser(t.services, p.id);
  return { p, c, u };
}

/** A fresh browser, optionally with an Accept-Language header on every request. */
function newBrowser(acceptLanguage?: string): Browser {
  const b = browser(t.app);
  if (acceptLanguage) b.agent.set('Accept-Language', acceptLanguage);
  return b;
}

const htmlLang = (html: string) => /<html[^>]*lang="([^"]+)"/.exec(html)?.[1];
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

const CONSENT = {
  de: {
    heading: 'Trip Planner möchte auf Ihr Konto zugreifen',
    scope: 'Ihre E-Mail-Adresse',
    allow: 'Erlauben',
    notYou: 'Nicht Sie?',
    continueTo: 'um mit Trip Planner fortzufahren',
  },
  fr: {
    heading: 'Trip Planner souhaite accéder à votre compte',
    scope: 'Votre adresse e-mail',
    allow: 'Autoriser',
    notYou: 'Ce n’est pas vous',
    continueTo: 'pour continuer vers Trip Planner',
  },
  es: {
    heading: 'Trip Planner quiere acceder a su cuenta',
    scope: 'Su correo electrónico',
    allow: 'Permitir',
    notYou: '¿No es usted?',
    continueTo: 'para continuar a Trip Planner',
  },
} as const;
const CHOOSER = {
  de: { title: 'Konto auswählen', signedIn: 'Angemeldet', another: 'Anderes Konto verwenden' },
  fr: { title: 'Choisissez un compte', signedIn: 'Connecté', another: 'Utiliser un autre compte' },
  es: { title: 'Elija una cuenta', signedIn: 'Sesión iniciada', another: 'Usar otra cuenta' },
} as const;
const LANGS = ['de', 'fr', 'es'] as const;

describe.each(LANGS)('%s', (lng) => {
  it('consent (ui_locales): heading, "to continue to", scopes, buttons and "Not you?" in the language', async () => {
    const { p, c, u } = await tenant();
    const b = newBrowser();
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { ui_locales: lng })}`);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(htmlLang(b.html)).toBe(lng);
    const page = text(b.html);
    expect(b.pageTitle()).toBe(CONSENT[lng].heading);
    for (const s of [CONSENT[lng].scope, CONSENT[lng].allow, CONSENT[lng].notYou, CONSENT[lng].continueTo])
      expect(page).toContain(s);
    expect(page).not.toContain('wants to access');
  });

  it('chooser (Accept-Language): title, account state and "use another account" in the language', async () => {
    const { p, c, u } = await tenant();
    const b = newBrowser(`${lng};q=0.9, en;q=0.5`);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    await b.submit('/consent', { decision: 'allow' });
    const res = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'select_account' })}`);
    expect(res.res.headers['content-language']).toBe(lng);
    expect(b.pageTitle()).toBe(CHOOSER[lng].title);
    const page = text(b.html);
    expect(page).toContain(CHOOSER[lng].signedIn);
    expect(page).toContain(CHOOSER[lng].another);
  });

  it("second factor: the page and a wrong code's message in the language", async () => {
    const { p, c, u } = await tenant();
    const enrolment = (await t.services.mfa.totp.beginEnrolment(u, 'Acme Travel'))!;
    const confirmed = await t.services.mfa.confirmTotp(u.id, totpAt(enrolment.secret, now()));
    expect(confirmed.ok).toBe(true);
    clock += 30_000;
    const b = newBrowser();
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { ui_locales: lng })}`);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(b.pageTitle()).toBe(
      { de: 'Bestätigung in zwei Schritten', fr: 'Validation en deux étapes', es: 'Verificación en dos pasos' }[lng],
    );
    const wrong = await b.submit('/second-factor', {
      method: 'totp',
      code: '000000' === totpAt(enrolment.secret, now()) ? '111111' : '000000',
    });
    expect(wrong.res.status).toBe(400);
    expect(text(b.html)).toContain(
      { de: 'Dieser Code ist nicht richtig.', fr: 'Ce code n’est pas correct.', es: 'Ese código no es correcto.' }[lng],
    );
    expect(text(b.html)).toContain(
      {
        de: 'Wiederherstellungscode verwenden',
        fr: 'Utiliser un code de récupération',
        es: 'Usar un código de recuperación',
      }[lng],
    );
  });

  it('the upstream failure page (Accept-Language) says why in the language', async () => {
    const { p } = await tenant();
    const b = newBrowser(lng);
    const res = await b.get(`/platforms/${p.id}/upstream/callback?state=nothing-pending&code=x`);
    expect(res.res.status).toBe(400);
    expect(htmlLang(b.html)).toBe(lng);
    expect(b.pageTitle()).toBe(
      { de: 'Anmeldung fehlgeschlagen', fr: 'Impossible de se connecter', es: 'No se pudo iniciar sesión' }[lng],
    );
  });
});

describe("consent: the app's branding", () => {
  it('shows the registered logo and links (noopener noreferrer); none registered: the initial and no links', async () => {
    const { p, c, u } = await tenant();
    const b = newBrowser();
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(b.pageTitle()).toBe('Trip Planner wants to access your account');
    expect(b.html).not.toContain('class="app-logo"');
    expect(b.html).toContain('class="app-badge"');
    expect(b.html).not.toContain('rel="noopener noreferrer"');

    await clientsRepo.update(t.services.deps.db, p.id, c.id, {
      logoUri: 'https://cdn.trip.example/logo.png',
      clientUri: 'https://trip.example/',
      policyUri: 'https://trip.example/privacy',
      tosUri: 'https://trip.example/terms',
    });
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'consent' })}`);
    if (b.pageTitle() === 'Choose an account') await b.submit('/chooser', { account: u.id });
    expect(b.pageTitle()).toBe('Trip Planner wants to access your account');
    expect(b.html).toMatch(
      /<img class="app-logo" src="https:\/\/cdn\.trip\.example\/logo\.png" alt="Trip Planner logo"/,
    );
    for (const [href, label] of [
      ['https://trip.example/', 'Website'],
      ['https://trip.example/privacy', 'Privacy policy'],
      ['https://trip.example/terms', 'Terms of service'],
    ]) {
      expect(b.html).toContain(`<a href="${href}" class="link" rel="noopener noreferrer">${label}</a>`);
    }
    expect(text(b.html)).toContain('to continue to Trip Planner');
  });

  it('"Not you?" leads to the chooser and grants nothing', async () => {
    const { p, c, u } = await tenant();
    const b = newBrowser();
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    const notYou = /<a href="([^"]+)" class="link">Not you\?/.exec(b.html)?.[1];
    expect(notYou).toMatch(/\/chooser$/);
    await b.get(notYou!);
    expect(b.pageTitle()).toBe('Choose an account');
    expect(text(b.html)).toContain('Signed in');
    const rows = await t.services.deps.db('consents').where({ user_id: u.id });
    expect(rows).toHaveLength(0);
  });
});
