// The sign-in, sign-up, forgot-password and reset-password pages in German, French and
// Spanish (ui_locales first, then Accept-Language), their error messages translated, and the
// sign-in findings that need no browser: the app named, the password field marked invalid, the
// email carried to "Forgot password?", "Use another email" back to the app, the toggle script.
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser, type Browser } from '../support/browser';
import { authorizeQuery } from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const unique = () => Math.random().toString(36).slice(2, 10);
async function tenant() {
  const p = await buildPlatform(t.services, `Acme ${unique()}`);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id, { email: `lang-${unique()}@example.com` });
  return { p, c, u };
}

const text = (html: string, pattern: RegExp) =>
  pattern
    .exec(html)?.[1]
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
const subtitle = (html: string) => text(html, /<p class="card-subtitle">([\s\S]*?)<\/p>/);
const alert = (html: string) => text(html, /role="alert"[^>]*>([\s\S]*?)<\/(?:div|p)>/);
const unescape = (s: string) => s.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&#34;/g, '"');

const LANGS = {
  de: {
    signin: 'Anmelden',
    subtitle: 'um mit Test app fortzufahren',
    forgot: 'Passwort vergessen?',
    wrong: 'E-Mail-Adresse oder Passwort ist falsch.',
    signup: 'Konto erstellen',
    young: 'Sie müssen mindestens 16 Jahre alt sein, um ein Konto zu erstellen',
    short: 'Verwenden Sie mindestens 8 Zeichen',
    reset: 'Passwort zurücksetzen',
    badEmail: 'Geben Sie eine gültige E-Mail-Adresse ein.',
    phone: '+49 30 12345678',
    example: '31. Dezember 1990',
  },
  fr: {
    signin: 'Se connecter',
    subtitle: 'pour continuer vers Test app',
    forgot: 'Mot de passe oublié ?',
    wrong: 'Adresse e-mail ou mot de passe incorrect.',
    signup: 'Créez votre compte',
    young: 'Vous devez avoir au moins 16 ans pour créer un compte',
    short: 'Utilisez au moins 8 caractères',
    reset: 'Réinitialisez votre mot de passe',
    badEmail: 'Saisissez une adresse e-mail valide.',
    phone: '+33 1 23 45 67 89',
    example: '31 décembre 1990',
  },
  es: {
    signin: 'Iniciar sesión',
    subtitle: 'para continuar a Test app',
    forgot: '¿Olvidó su contraseña?',
    wrong: 'El correo electrónico o la contraseña no son correctos.',
    signup: 'Cree su cuenta',
    young: 'Debe tener al menos 16 años para crear una cuenta',
    short: 'Use al menos 8 caracteres',
    reset: 'Restablezca su contraseña',
    badEmail: 'Introduzca una dirección de correo electrónico válida.',
    phone: '+34 912 345 678',
    example: '31 de diciembre de 1990',
  },
} as const;
type Lang = keyof typeof LANGS;

/** A young applicant with a short password: two field errors that name a number ({{minAge}}, {{min}}). */
const badSignUp = (email: string) => ({
  email,
  given_name: 'Ada',
  family_name: 'Lovelace',
  birthdate: `${new Date().getUTCFullYear() - 10}-01-01`,
  phone_number: '',
  password: 'short',
});

async function checkPages(b: Browser, lang: Lang, start: string, email: string) {
  const L = LANGS[lang];
  await b.get(start);
  expect(b.html).toContain(`<html lang="${lang}">`);
  expect([b.pageTitle(), subtitle(b.html)]).toEqual([L.signin, L.subtitle]);
  expect(b.html).toContain(`>${L.forgot}</a>`);
  const wrong = await b.submit('/signin', { email, password: 'not the password' });
  expect([wrong.res.status, alert(b.html)]).toEqual([400, L.wrong]);
  expect(b.html).toMatch(/id="password"[^>]*aria-invalid="true" aria-describedby="form-error"/);

  await b.get(`${b.html.match(/href="([^"]*\/signup)"/)![1]}`);
  expect(b.pageTitle()).toBe(L.signup);
  expect(b.html).toContain(L.phone);
  expect(b.html).toContain(L.example);
  await b.submit('/signup', badSignUp(`new-${unique()}@example.com`));
  expect(text(b.html, /id="birthdate-error">([\s\S]*?)<\/p>/)).toBe(L.young);
  expect(text(b.html, /id="password-error">([\s\S]*?)<\/p>/)).toBe(L.short);
}

describe('sign-in pages in every language', () => {
  it.each(Object.keys(LANGS) as Lang[])(
    '%s through ui_locales: sign-in, a wrong password, sign-up and its field errors',
    async (lang) => {
      const { p, c, u } = await tenant();
      const b = browser(t.app);
      await checkPages(
        b,
        lang,
        `/oauth/authorize?${authorizeQuery(p, c, { ui_locales: `xx ${lang}-XX en` })}`,
        u.email,
      );
    },
  );

  it.each(Object.keys(LANGS) as Lang[])(
    '%s through Accept-Language: the same, and the forgot-password page with its error at the field',
    async (lang) => {
      const { p, c, u } = await tenant();
      const b = browser(t.app);
      b.agent.set('Accept-Language', `${lang};q=0.9, en;q=0.5`);
      await checkPages(b, lang, `/oauth/authorize?${authorizeQuery(p, c)}`, u.email);
      await b.get(`/password/forgot?platform_guid=${p.id}&email=${encodeURIComponent(u.email)}`);
      expect(b.pageTitle()).toBe(LANGS[lang].reset);
      expect(b.html).toContain(`value="${u.email}"`);
      const bad = await b.submit(`/password/forgot?platform_guid=${p.id}`, { email: 'not-an-email' });
      expect(bad.res.status).toBe(400);
      expect(text(b.html, /id="email-error"[^>]*>([\s\S]*?)<\/p>/)).toBe(LANGS[lang].badEmail);
      expect(b.html).toMatch(/id="email"[^>]*aria-invalid="true" aria-describedby="email-error"/);
    },
  );

  it('English stays as it was, and names the app: "Sign in", "to continue to Test app"', async () => {
    const { p, c } = await tenant();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect([b.pageTitle(), subtitle(b.html)]).toEqual(['Sign in', 'to continue to Test app']);
    expect(b.html).toContain(`<span class="brand-name">${p.name}</span>`); // the platform: in the header
  });
});

describe('sign-in findings', () => {
  it('"Forgot password?" comes after the password field and carries the email typed once the form came back', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const order = ['id="email"', 'id="password"', 'data-forgot-link'].map((s) => b.html.indexOf(s));
    expect(order).toEqual([...order].sort((x, y) => x - y));
    await b.submit('/signin', { email: u.email, password: 'wrong one' });
    const href = unescape(/href="([^"]*\/forgot[^"]*)"/.exec(b.html)![1]);
    expect(href).toContain(`email=${encodeURIComponent(u.email)}`);
    await b.get(href);
    expect(b.pageTitle()).toBe('Reset your password');
    expect(b.html).toMatch(new RegExp(`id="email"[^>]*value="${u.email.replace(/[.]/g, '\\.')}"`));
  });

  it('a pinned email offers "Use another email": back to the app with account_selection_required', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { login_hint: u.email, state: 'st-9' })}`);
    expect(b.html).toContain('Use another email');
    const back = await b.submit('/another-email', {});
    const url = new URL(back.location!);
    expect(`${url.origin}${url.pathname}`).toBe(c.redirectUris[0]);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ error: 'account_selection_required', state: 'st-9' });
    expect(url.searchParams.get('iss')).toBeTruthy();
  });

  it('"Use another email" is not offered, and refused, when the email is not pinned', async () => {
    const { p, c } = await tenant();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect(b.html).not.toContain('/another-email');
    const iid = /action="\/interaction\/([^/"]+)\/signin"/.exec(b.html)![1];
    const csrf = /name="_csrf" value="([^"]+)"/.exec(b.html)![1];
    const res = await b.agent.post(`/interaction/${iid}/another-email`).type('form').send({ _csrf: csrf });
    expect([res.status, res.headers.location]).toEqual([303, `/interaction/${iid}`]);
  });

  it("the sign-in, sign-up and reset pages load the show-password script, and only with script-src 'self'", async () => {
    const { p, c } = await tenant();
    const b = browser(t.app);
    const page = await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect(b.html).toContain('<script src="/static/password-toggle.js" defer></script>');
    expect(b.html).toContain('data-password-toggle="Show password"');
    expect(page.res.headers['content-security-policy']).toMatch(/script-src 'self'/);
    const forgot = await b.get(`/password/forgot?platform_guid=${p.id}`);
    expect(forgot.res.headers['content-security-policy']).toMatch(/script-src 'none'/);
    const js = await b.agent.get('/static/password-toggle.js');
    expect([js.status, js.type]).toEqual([200, 'text/javascript']);
  });

  it("a throttled sign-in says how long to wait in the page's language", async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { ui_locales: 'de' })}`);
    let last = '';
    for (let i = 0; i < 8 && !last.includes('Zu viele'); i++) {
      await b.submit('/signin', { email: u.email, password: `wrong ${i}` });
      last = alert(b.html) ?? '';
    }
    expect(last).toMatch(/^Zu viele Versuche\. Versuchen Sie es in \d+ Minuten? erneut\.$/);
  });
});

// The password the factories give is right: signing in still works in another language.
it('signs in in French', async () => {
  const { p, c, u } = await tenant();
  const b = browser(t.app);
  await b.get(`/oauth/authorize?${authorizeQuery(p, c, { ui_locales: 'fr' })}`);
  const done = await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
  expect(done.location ?? b.pageTitle()).toBeTruthy();
});

it('a throttled or pinned refusal is a banner only: the password field is not marked invalid', async () => {
  const { p, c, u } = await tenant();
  const other = await buildUser(t.services, p.id, { email: `other-${unique()}@example.com` });
  const b = browser(t.app);
  await b.get(`/oauth/authorize?${authorizeQuery(p, c, { login_hint: u.email })}`);
  await b.submit('/signin', { email: other.email, password: TEST_PASSWORD });
  expect(alert(b.html)).toBe(`This sign-in is for ${u.email}.`);
  expect(b.html).not.toMatch(/id="password"[^>]*aria-invalid/);
});
