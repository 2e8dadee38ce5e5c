import { buildTestApp } from '../helpers';
import { buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { accountSignIn } from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const newEmail = () => `lang-${Math.random().toString(36).slice(2, 10)}@example.com`;

/** A browser that asks for `language` (Accept-Language) on every request. */
function browserIn(language: string) {
  const b = browser(t.app);
  b.agent.set('Accept-Language', language);
  return b;
}

const cases = [
  {
    lng: 'de',
    title: 'Ihr Konto',
    tabs: ['Profil', 'Sicherheit', 'Apps'],
    save: 'Profil speichern',
    password: 'Passwort ändern',
    apps: 'Keine App hat Zugriff auf Ihr Konto.',
    saved: 'Ihr Profil wurde gespeichert.',
    badCountry: 'Wählen Sie ein Land aus der Liste',
    country: 'Deutschland',
  },
  {
    lng: 'fr',
    title: 'Votre compte',
    tabs: ['Profil', 'Sécurité', 'Applications'],
    save: 'Enregistrer le profil',
    password: 'Changer le mot de passe',
    apps: 'Aucune application n’a accès à votre compte.',
    saved: 'Votre profil a été enregistré.',
    badCountry: 'Choisissez un pays dans la liste',
    country: 'Allemagne',
  },
  {
    lng: 'es',
    title: 'Su cuenta',
    tabs: ['Perfil', 'Seguridad', 'Aplicaciones'],
    save: 'Guardar perfil',
    password: 'Cambiar contraseña',
    apps: 'Ninguna aplicación tiene acceso a su cuenta.',
    saved: 'Su perfil se ha guardado.',
    badCountry: 'Elija un país de la lista',
    country: 'Alemania',
  },
];

describe('account page in German, French and Spanish (Accept-Language)', () => {
  it.each(cases)('$lng: every tab, a saved profile and a field error speak the language', async (c) => {
    const p = await buildPlatform(t.services, 'Acme Travel');
    const u = await buildUser(t.services, p.id, { email: newEmail() });
    const b = browserIn(`${c.lng}-XX, en;q=0.5`);
    await accountSignIn(b, p, u.email);
    expect(b.pageTitle()).toBe(c.title);
    expect(b.html).toContain(`<html lang="${c.lng}">`);
    for (const tab of c.tabs) expect(b.html).toContain(`>${tab}</a>`);
    expect(b.html).toMatch(/<a href="[^"]*" class="account-tab" aria-current="page">/);
    expect(b.html).toContain(c.save);
    expect(b.html).toContain(`>${c.country}</option>`); // country names in the page's language (Intl.DisplayNames)
    expect(b.html).not.toContain('Save profile');

    await b.get(`/account?platform_guid=${p.id}&section=security`);
    expect(b.html).toContain(c.password);
    expect(b.html).not.toContain('Change password');
    await b.get(`/account?platform_guid=${p.id}&section=apps`);
    expect(b.html).toContain(c.apps);

    await b.get(`/account?platform_guid=${p.id}`);
    const form = {
      account: u.id,
      given_name: 'Ada',
      middle_name: '',
      family_name: 'Lovelace',
      nickname: '',
      preferred_username: 'ada',
      phone_number: '',
      street_address: '',
      locality: '',
      region: '',
      postal_code: '',
      country: '',
    };
    const bad = await b.submit(`/account/profile?platform_guid=${p.id}`, { ...form, country: 'ZZ' });
    expect(bad.res.status).toBe(400);
    expect(b.html).toContain(c.badCountry);
    await b.submit(`/account/profile?platform_guid=${p.id}`, { ...form, nickname: 'Countess' });
    expect(b.html).toContain(c.saved);
  });

  it('stays English for English, an unknown language, or none', async () => {
    const p = await buildPlatform(t.services, 'Acme Travel');
    const u = await buildUser(t.services, p.id, { email: newEmail() });
    for (const language of ['en-GB', 'pt-BR', '']) {
      const b = language ? browserIn(language) : browser(t.app);
      await accountSignIn(b, p, u.email);
      expect(b.pageTitle()).toBe('Your account');
      expect(b.html).toContain('Save profile');
    }
  });

  it('an unknown section shows the profile tab; the security tab marks itself current', async () => {
    const p = await buildPlatform(t.services, 'Acme Travel');
    const u = await buildUser(t.services, p.id, { email: newEmail() });
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    const odd = await b.get(`/account?platform_guid=${p.id}&section=%3Cscript%3E`);
    expect(odd.res.status).toBe(200);
    expect(b.html).toContain('Save profile');
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    expect(b.html).toMatch(/section=security" class="account-tab" aria-current="page">Security</);
    expect(b.html).not.toContain('Save profile');
  });

  it('the signed-out account page offers "Create account", which creates an account and signs it in', async () => {
    const p = await buildPlatform(t.services, 'Acme Travel');
    const b = browserIn('de');
    await b.get(`/account?platform_guid=${p.id}`);
    expect(b.html).toContain(`href="/account/signup?platform_guid=${p.id}"`);
    await b.get(`/account/signup?platform_guid=${p.id}`);
    expect(b.html).toContain(`action="/account/signup?platform_guid=${p.id}"`);
    const email = newEmail();
    const form = {
      email,
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-01-01',
      phone_number: '',
      password: 'a long pass phrase',
    };
    const refused = await b.submit(`/account/signup?platform_guid=${p.id}`, { ...form, birthdate: 'yesterday' });
    expect(refused.res.status).toBe(400);
    await b.submit(`/account/signup?platform_guid=${p.id}`, form);
    expect(b.pageTitle()).toBe('Ihr Konto');
    expect(b.html).toContain(email);
    expect((await t.services.users.findByEmail(p.id, email))?.givenName).toBe('Grace');
  });
});
