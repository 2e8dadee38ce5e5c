import { buildTestApp } from '../helpers';
import { buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { waitForMail } from '../support/outbox';
import { accountSignIn } from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const newEmail = () => `mail-lang-${Math.random().toString(36).slice(2, 10)}@example.com`;

async function signedInAs(language: string, emailVerified = false) {
  const p = await buildPlatform(t.services, 'Acme Travel');
  const u = await buildUser(t.services, p.id, { email: newEmail(), emailVerified });
  const b = browser(t.app);
  b.agent.set('Accept-Language', language);
  await accountSignIn(b, p, u.email);
  return { p, u, b };
}

describe('account mails in the language of the browser that caused them', () => {
  it('German: the verification mail asked for on the account page (subject, text and HTML)', async () => {
    const { p, u, b } = await signedInAs('de-DE,de;q=0.9');
    await b.submit(`/account/verify-email?platform_guid=${p.id}`, { account: u.id });
    expect(b.html).toContain(`Wir haben einen Bestätigungslink an ${u.email} gesendet.`);
    const mail = await waitForMail(t.config.dataDir, u.email, /Bestätigen/);
    expect(mail.subject).toBe('Bestätigen Sie Ihre E-Mail-Adresse für Acme Travel');
    expect(mail.text).toContain('Hallo,'); // unverified: no name
    expect(mail.text).toContain('E-Mail-Adresse bestätigen:');
    expect(mail.text).toContain('läuft in 24 Stunden ab');
    expect(mail.text).toContain('Geschützt durch Latchkey');
    expect(mail.html).toContain('<html lang="de">');
    expect(mail.html).toContain('Falls die Schaltfläche nicht funktioniert');
    expect(mail.html).toContain('Gesendet von Acme Travel');
    expect(mail.text).not.toMatch(/Hello|Verify|expires/);
  });

  it('French: the password-changed mail after a change on the account page, greeting the verified name', async () => {
    const { p, u, b } = await signedInAs('fr', true);
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    await b.submit(`/account/password?platform_guid=${p.id}`, {
      account: u.id,
      current_password: TEST_PASSWORD,
      new_password: 'une longue phrase secrète',
    });
    expect(b.html).toContain('Votre mot de passe a été changé.');
    const mail = await waitForMail(t.config.dataDir, u.email, /mot de passe/);
    expect(mail.subject).toBe('Votre mot de passe Acme Travel a été changé');
    expect(mail.text).toContain('Bonjour Ada,');
    expect(mail.text).toContain(`Le mot de passe de votre compte Acme Travel (${u.email}) vient d’être changé`);
    expect(mail.html).toContain('<html lang="fr">');
    expect(mail.html).toContain('Sécurisé par Latchkey');
  });

  it('Spanish: "Set a password" mails the reset link in Spanish', async () => {
    const { p, u, b } = await signedInAs('es');
    // An account without a password (upstream sign-up) gets "Set a password"; the form mails a reset link.
    await t.database.db('users').where({ platform_id: p.id, id: u.id }).update({ password_hash: null });
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    await b.submit(`/account/password/set?platform_guid=${p.id}`, { account: u.id });
    expect(b.html).toContain(`Hemos enviado a ${u.email} un enlace para establecer su contraseña.`);
    const mail = await waitForMail(t.config.dataDir, u.email, /Restablezca/);
    expect(mail.subject).toBe('Restablezca su contraseña de Acme Travel');
    expect(mail.text).toContain('Elegir una nueva contraseña:');
    expect(mail.text).toContain('caduca en 30 minutos');
    expect(mail.html).toContain('<html lang="es">');
  });

  it('the upstream link mail in a locale given by its caller, English without one', async () => {
    const p = await buildPlatform(t.services, 'Acme Travel');
    const u = await buildUser(t.services, p.id, { email: newEmail(), emailVerified: true });
    await t.services.account.mail.linkAccount(
      t.database.db,
      p,
      u,
      'GitHub',
      'http://issuer.test/link?token=x',
      15,
      'de',
    );
    const de = await waitForMail(t.config.dataDir, u.email, /Verknüpfen/);
    expect(de.subject).toBe('Verknüpfen Sie Ihr GitHub-Konto mit Acme Travel');
    expect(de.text).toContain('GitHub verknüpfen und anmelden:');
    expect(de.text).toContain('läuft in 15 Minuten ab');
    await t.services.account.mail.passwordChanged(t.database.db, p, u);
    const en = await waitForMail(t.config.dataDir, u.email, /password was changed/);
    expect(en.subject).toBe('Your Acme Travel password was changed');
    expect(en.text).toContain('Hello Ada,');
    expect(en.html).toContain('<html lang="en">');
  });
});
