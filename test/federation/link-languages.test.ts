// The upstream pages of an authorization speak its language (ui_locales): the
// "Continue with …" button, the link page, its refusals and its notice.
import { startClockedProvider, newBrowser, type ClockedProvider } from '../support/standard-op';
import { buildUser } from '../factories';
import { PROVIDER_NAME, federation, identitiesOf, startAuthorization, throughUpstream, upstreamUser } from './support';

let p: ClockedProvider;
beforeAll(async () => {
  p = await startClockedProvider();
});
afterAll(async () => {
  await p.close();
});

const TEXTS = {
  de: {
    continueWith: `Weiter mit ${PROVIDER_NAME}`,
    title: `Ihr ${PROVIDER_NAME}-Konto verknüpfen`,
    wrong: 'Dieses Passwort ist nicht richtig.',
    mailed: 'Wir haben einen Link an',
  },
  fr: {
    continueWith: `Continuer avec ${PROVIDER_NAME}`,
    title: `Associer votre compte ${PROVIDER_NAME}`,
    wrong: 'Ce mot de passe n’est pas correct.',
    mailed: 'Nous avons envoyé un lien à',
  },
  es: {
    continueWith: `Continuar con ${PROVIDER_NAME}`,
    title: `Vincular su cuenta de ${PROVIDER_NAME}`,
    wrong: 'Esa contraseña no es correcta.',
    mailed: 'Hemos enviado un enlace a',
  },
} as const;

it.each(['de', 'fr', 'es'] as const)(
  '%s: the upstream button, the link page, a wrong password and the mailed-link notice',
  async (lng) => {
    const f = await federation(p);
    const upUser = await upstreamUser(p, f);
    const local = await buildUser(p.t.services, f.down.id, { email: upUser.email });
    const down = newBrowser(p);
    await startAuthorization(down, f, { ui_locales: lng });
    expect(down.html).toContain(TEXTS[lng].continueWith);
    await throughUpstream(p, down, newBrowser(p), upUser);
    expect(down.html).toContain(`<html lang="${lng}"`);
    expect(down.pageTitle()).toBe(TEXTS[lng].title);
    expect(down.html).not.toContain('Link with my password');

    const wrong = await down.submit('/link-account/password', { password: 'not the password' });
    expect(wrong.res.status).toBe(400);
    expect(down.html).toContain(TEXTS[lng].wrong);

    await down.submit('/link-account/email', {});
    expect(down.html).toContain(`${TEXTS[lng].mailed} ${local.email}`);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);
  },
);
