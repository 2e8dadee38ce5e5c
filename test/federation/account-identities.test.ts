import { startClockedProvider, newBrowser, type ClockedProvider } from '../support/standard-op';
import { buildClient, buildUser } from '../factories';
import { accountSignIn } from '../support/account-flows';
import { randomBytes, randomUUID } from 'node:crypto';
import * as passkeys from '../../src/repositories/webauthn-credential.repository';
import type { Browser } from '../support/browser';
import { waitForMail } from '../support/outbox';
import { totpAt } from '../support/totp';
import {
  PROVIDER_NAME,
  SLUG,
  auditKinds,
  federation,
  identitiesOf,
  startAuthorization,
  throughUpstream,
  upstreamUser,
  type Federation,
} from './support';

/**
 * The account page and upstream identities: signing the account page in through a
 * linked upstream, the "Linked accounts" list, Unlink (never the last way in) and "Set a password"
 * for an account created without one.
 */

let p: ClockedProvider;
const s = () => p.t.services;

beforeAll(async () => {
  p = await startClockedProvider();
});
afterAll(async () => {
  await p.close();
});

const accountPath = (f: Federation, suffix = '') => `/account${suffix}?platform_guid=${f.down.id}`;

/** A user created through the upstream (no password); answers the upstream user and the local one. */
async function signedUpThroughUpstream(f: Federation) {
  const upUser = await upstreamUser(p, f);
  const b = newBrowser(p);
  await startAuthorization(b, f);
  await throughUpstream(p, b, newBrowser(p), upUser);
  await b.submit('/signup', {
    given_name: 'Grace',
    family_name: 'Hopper',
    birthdate: '1990-05-17',
    phone_number: '',
    password: '',
  });
  await b.submit('/consent', { decision: 'allow' });
  return { upUser, local: (await s().users.findByEmail(f.down.id, upUser.email))! };
}

describe('the account page', () => {
  it('signs in through a linked upstream and lists it; Unlink of the only way in is refused; Set a password mails the link', async () => {
    const f = await federation(p);
    const { upUser, local } = await signedUpThroughUpstream(f);
    const b = newBrowser(p);
    await b.get(accountPath(f, '/signin'));
    expect(b.html).toContain(`Continue with ${PROVIDER_NAME}`);
    const back = await throughUpstream(p, b, newBrowser(p), upUser, {
      suffix: `/account/upstream/${SLUG}?platform_guid=${f.down.id}`,
    });
    expect(back.res.status).toBe(200);
    expect(b.pageTitle()).toBe('Your account');
    await b.get(`${accountPath(f)}&section=security`); // linked accounts and the password are on the Security tab
    expect(b.html).toContain('Linked accounts');
    expect(b.html).toContain(PROVIDER_NAME);
    expect(b.html).toContain(upUser.email);
    expect(b.html).toContain('Set a password');
    expect(b.html).not.toContain('Change password');

    const [identity] = await identitiesOf(p, f.down.id);
    const refused = await b.submit(`/identities/${identity.id}/unlink?platform_guid=${f.down.id}`, {
      account: local.id,
    });
    expect(refused.res.status).toBe(400);
    expect(b.html).toContain('You can&#39;t unlink your only way to sign in.');
    expect(await identitiesOf(p, f.down.id)).toHaveLength(1);

    await b.get(`${accountPath(f)}&section=security`);
    await b.submit(accountPath(f, '/password/set'), { account: local.id });
    expect(b.html).toContain(`We sent a link to ${local.email} to set your password.`);
    await waitForMail(p.t.config.dataDir, local.email, /Reset your .* password/);
    expect(await auditKinds(p, f.down.id)).toContainEqual({
      kind: 'sign_in.succeeded',
      details: { method: 'upstream', provider: SLUG, amr: ['fed'] },
    });
  });

  it('with a password as well, Unlink removes the identity (audited) and the upstream no longer signs the account page in', async () => {
    const f = await federation(p);
    const upUser = await upstreamUser(p, f);
    const local = await buildUser(s(), f.down.id, { email: upUser.email });
    // Linked by proof through an authorization.
    const a = newBrowser(p);
    await startAuthorization(a, f);
    await throughUpstream(p, a, newBrowser(p), upUser);
    await a.submit('/link-account/password', { password: 'correct horse battery staple' });
    expect(await identitiesOf(p, f.down.id)).toHaveLength(1);

    const b = newBrowser(p);
    await accountSignIn(b, f.down, local.email);
    await b.get(`${accountPath(f)}&section=security`);
    expect(b.html).toContain('Change password');
    const [identity] = await identitiesOf(p, f.down.id);
    await b.submit(`/identities/${identity.id}/unlink?platform_guid=${f.down.id}`, { account: local.id });
    expect(b.html).toContain(`Your ${PROVIDER_NAME} account is no longer linked.`);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);
    expect(await auditKinds(p, f.down.id)).toContainEqual({
      kind: 'identity.unlinked',
      details: { provider: SLUG, email: upUser.email },
    });

    const c = newBrowser(p);
    await c.get(accountPath(f, '/signin'));
    const refused = await throughUpstream(p, c, newBrowser(p), upUser, {
      suffix: `/account/upstream/${SLUG}?platform_guid=${f.down.id}`,
    });
    expect(refused.res.status).toBe(400);
    expect(c.html).toContain(
      `No account here is linked to this ${PROVIDER_NAME} account yet. Sign in another way first`,
    );
    expect((await c.agent.get(accountPath(f))).headers.location).toContain('/account/signin');
  });

  it('a user with an authenticator app gives its code after the upstream, before the account page signs in', async () => {
    const f = await federation(p);
    const { upUser, local } = await signedUpThroughUpstream(f);
    const enrolment = (await s().mfa.totp.beginEnrolment(local, 'Down'))!;
    expect(await s().mfa.totp.confirmEnrolment(local.id, totpAt(enrolment.secret, p.now()))).toBe(true);
    p.tick(31);
    const b = newBrowser(p);
    await b.get(`${accountPath(f)}&section=security`); // signed out: the sign-in page, which keeps the tab asked for
    expect(b.html).toContain(`action="/account/upstream/${SLUG}?platform_guid=${f.down.id}&amp;section=security"`);
    await throughUpstream(p, b, newBrowser(p), upUser, {
      suffix: `/account/upstream/${SLUG}?platform_guid=${f.down.id}&section=security`,
    });
    expect(b.pageTitle()).toBe('Two-step verification');
    await b.submit('/account/second-factor?platform_guid=' + f.down.id, {
      method: 'totp',
      code: totpAt(enrolment.secret, p.now()),
    });
    expect(b.pageTitle()).toBe('Your account');
    expect(b.html).toMatch(/class="account-tab" aria-current="page">Security</);
  });

  it('another user’s identity cannot be unlinked', async () => {
    const f = await federation(p);
    await signedUpThroughUpstream(f);
    const other = await buildUser(s(), f.down.id);
    const b = newBrowser(p);
    await accountSignIn(b, f.down, other.email);
    const [identity] = await identitiesOf(p, f.down.id);
    await b.get(accountPath(f));
    const csrf = /name="_csrf" value="([^"]+)"/.exec(b.html)![1];
    const res = await b.agent
      .post(`/account/identities/${identity.id}/unlink?platform_guid=${f.down.id}`)
      .type('form')
      .send({ _csrf: csrf, account: other.id });
    expect(res.status).toBe(303);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(1);
  });

  it('a disabled account cannot sign in through its upstream', async () => {
    const f = await federation(p);
    const { upUser, local } = await signedUpThroughUpstream(f);
    await p.t.database.db('users').where({ id: local.id }).update({ disabled_at: new Date() });
    const b = newBrowser(p);
    await b.get(accountPath(f, '/signin'));
    const res = await throughUpstream(p, b, newBrowser(p), upUser, {
      suffix: `/account/upstream/${SLUG}?platform_guid=${f.down.id}`,
    });
    expect(res.res.status).toBe(400);
    expect(b.html).toContain('This account cannot sign in.');

    const a = newBrowser(p);
    await startAuthorization(a, f);
    const refused = await throughUpstream(p, a, newBrowser(p), upUser);
    expect(refused.res.status).toBe(400);
    expect(a.html).toContain('This account cannot sign in.');
    expect(await auditKinds(p, f.down.id)).toContainEqual({
      kind: 'sign_in.failed',
      details: { method: 'upstream', provider: SLUG, reason: 'disabled' },
    });
  });
});

describe('Unlink: never the last way in (a password, a passkey or another identity through an enabled provider)', () => {
  /** The account page signed in through the upstream, for a user created through it (no password). */
  async function accountPageOf(f: Federation) {
    const { upUser, local } = await signedUpThroughUpstream(f);
    const b = newBrowser(p);
    await b.get(accountPath(f, '/signin'));
    await throughUpstream(p, b, newBrowser(p), upUser, {
      suffix: `/account/upstream/${SLUG}?platform_guid=${f.down.id}`,
    });
    expect(b.pageTitle()).toBe('Your account');
    expect(await s().federation.identities.hasPassword(f.down.id, local.id)).toBe(false);
    return { upUser, local, b };
  }

  /** A second provider "Beta ID" (beta-id) on the downstream platform, at the same upstream; the user's identity there linked. */
  async function secondIdentity(
    f: Federation,
    local: { id: string },
    upUser: { id: string; email: string },
    enabled = true,
  ) {
    const upClient = await buildClient(s(), f.op.platformId, {
      redirectUris: [`${p.base}/platforms/${f.down.id}/upstream/callback`],
    });
    const provider = await s().federation.providers.create(f.down.id, {
      kind: 'oidc',
      slug: 'beta-id',
      displayName: 'Beta ID',
      issuer: f.op.issuer,
      clientId: upClient.id,
      clientSecret: upClient.secret,
      enabled,
    });
    const linked = await s().federation.identities.link(
      { id: local.id, platformId: f.down.id },
      { id: provider.id, slug: provider.slug },
      { providerId: provider.id, subject: upUser.id, email: upUser.email, sealedTokens: null },
    );
    expect(linked).toBeDefined();
    return linked!;
  }

  async function unlink(b: Browser, f: Federation, local: { id: string }, identityId: string) {
    await b.get(`${accountPath(f)}&section=security`);
    return b.submit(`/identities/${identityId}/unlink?platform_guid=${f.down.id}`, { account: local.id });
  }
  const acmeIdentity = async (f: Federation) =>
    (await identitiesOf(p, f.down.id)).find((i: { provider_id: string }) => i.provider_id === f.providerId);

  it('with a passkey and no password, the only identity can be unlinked', async () => {
    const f = await federation(p);
    const { local, b } = await accountPageOf(f);
    // A passkey row as registration stores it. (The account page offers passkeys only on a host name,
    // and this provider listens on 127.0.0.1: test/pages/passkeys.test.ts registers them over HTTP.)
    expect(
      await passkeys.insert(
        p.t.database.db,
        {
          id: randomUUID(),
          platformId: f.down.id,
          userId: local.id,
          credentialId: randomBytes(16).toString('base64url'),
          publicKey: randomBytes(77).toString('base64url'),
          counter: 0,
          transports: ['internal'],
          name: 'Laptop',
          isBackupEligible: false,
          isBackedUp: false,
          aaguid: null,
        },
        p.now(),
      ),
    ).toBe(true);
    await b.get(`${accountPath(f)}&section=security`);
    expect(b.html).toContain('Laptop');

    const identity = (await acmeIdentity(f))!;
    await unlink(b, f, local, identity.id);
    expect(b.html).toContain(`Your ${PROVIDER_NAME} account is no longer linked.`);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);
  });

  it('with a second linked identity and no password, one can be unlinked; then the other is the last way in and is refused', async () => {
    const f = await federation(p);
    const { upUser, local, b } = await accountPageOf(f);
    const beta = await secondIdentity(f, local, upUser);

    const acme = (await acmeIdentity(f))!;
    await unlink(b, f, local, acme.id);
    expect(b.html).toContain(`Your ${PROVIDER_NAME} account is no longer linked.`);
    expect((await identitiesOf(p, f.down.id)).map((i: { id: string }) => i.id)).toEqual([beta.id]);

    const refused = await unlink(b, f, local, beta.id);
    expect(refused.res.status).toBe(400);
    expect(b.html).toContain('You can&#39;t unlink your only way to sign in.');
    expect(await identitiesOf(p, f.down.id)).toHaveLength(1);
  });

  it('an identity through a disabled provider is not another way in (docs/decisions.md); once the provider is enabled again it is', async () => {
    const f = await federation(p);
    const { upUser, local, b } = await accountPageOf(f);
    await secondIdentity(f, local, upUser, false);

    const acme = (await acmeIdentity(f))!;
    const refused = await unlink(b, f, local, acme.id);
    expect(refused.res.status).toBe(400);
    expect(b.html).toContain('You can&#39;t unlink your only way to sign in.');
    expect(await identitiesOf(p, f.down.id)).toHaveLength(2);

    await s().federation.providers.update(f.down.id, 'beta-id', { enabled: true });
    await unlink(b, f, local, acme.id);
    expect(b.html).toContain(`Your ${PROVIDER_NAME} account is no longer linked.`);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(1);
  });
});
