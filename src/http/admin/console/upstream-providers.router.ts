import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import { MAPPABLE_CLAIMS, type UpstreamKind } from '../../../domain/upstream';
import { invalidRequest } from '../../../errors';
import { parseInput } from '../../../services/admin/parse-input';
import {
  UpstreamProviderCreate,
  UpstreamProviderParams,
  UpstreamProviderUpdate,
} from '../../../wire/admin/upstream-providers.schemas';
import { presentUpstreamProvider } from '../../../presenters/admin/upstream-provider.presenter';
import { field, submitForm } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';

/** The kinds as the form offers them. */
const KINDS: Array<{ value: UpstreamKind; label: string }> = [
  { value: 'oidc', label: 'OpenID Connect (any provider)' },
  { value: 'google', label: 'Google' },
  { value: 'microsoft', label: 'Microsoft (Entra ID)' },
  { value: 'github', label: 'GitHub' },
];

/** `local=upstream` per line → the claim mapping (the service checks the names). */
function claimMappingOf(text: string): Record<string, string> {
  const mapping: Record<string, string> = {};
  for (const line of text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)) {
    const eq = line.indexOf('=');
    if (eq <= 0 || eq === line.length - 1)
      throw invalidRequest(`claim_mapping: write one LOCAL=UPSTREAM per line, e.g. email=mail (not "${line}")`);
    mapping[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return mapping;
}

const claimLines = (mapping: Record<string, string>) =>
  Object.entries(mapping)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
const scopesOf = (text: string) => text.split(/\s+/).filter(Boolean);
/** A text field, or undefined when left empty (the preset's or the current value then). */
const given = (req: Request, name: string) => field(req, name) || undefined;
const withoutUndefined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
/** Select "default" / "yes" / "no" → undefined / true / false. */
const triState = (value: string) => (value === 'yes' ? true : value === 'no' ? false : undefined);

/** The form as typed, to show it again after a refusal (never the secret). */
function formOf(req: Request) {
  return {
    kind: field(req, 'kind'),
    display_name: field(req, 'display_name'),
    slug: field(req, 'slug'),
    issuer: field(req, 'issuer'),
    tenant: field(req, 'tenant'),
    api_base_url: field(req, 'api_base_url'),
    client_id: field(req, 'client_id'),
    scopes: field(req, 'scopes'),
    claim_mapping: field(req, 'claim_mapping'),
    trust_email: field(req, 'trust_email'),
    trust_mfa: field(req, 'trust_mfa') === 'yes',
    store_tokens: field(req, 'store_tokens') === 'yes',
    enabled: field(req, 'enabled') === 'yes',
    remove_secret: field(req, 'remove_secret') === 'yes',
  };
}
type Form = ReturnType<typeof formOf>;

const NEW_FORM: Form = {
  kind: 'oidc',
  display_name: '',
  slug: '',
  issuer: '',
  tenant: '',
  api_base_url: '',
  client_id: '',
  scopes: '',
  claim_mapping: '',
  trust_email: 'default',
  trust_mfa: false,
  store_tokens: false,
  enabled: true,
  remove_secret: false,
};

/**
 * A platform's upstream identity providers (s.admin.upstreamProviders): the list with the callback
 * URL to register and the form to add one; a provider's page to edit and remove it. The client
 * secret is write-only: a password field that is never filled in, and "a secret is set" or not.
 */
export function consoleUpstreamProvidersRouter(s: Services): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/upstream-providers`;
  const platformId = (req: Request) => String(req.params.platformId);
  const present = (p: Parameters<typeof presentUpstreamProvider>[0]) =>
    presentUpstreamProvider(p, s.federation.providers.callbackUrl(p.platformId));
  /** The :providerId of the path, checked like the API's (an id or a slug; else 400). */
  const providerId = (req: Request) =>
    parseInput(UpstreamProviderParams, { platform_guid: platformId(req), provider_id: String(req.params.providerId) })
      .provider_id;

  async function showList(
    req: Request,
    res: Response,
    form: Form = NEW_FORM,
    error: string | null = null,
    status = 200,
  ) {
    const providers = (await s.admin.upstreamProviders.list(operatorActor(req, res), platformId(req))).map(present);
    renderConsole(
      req,
      res,
      'upstream-providers',
      {
        title: 'Upstream providers',
        providers,
        callbackUrl: s.federation.providers.callbackUrl(platformId(req)),
        kinds: KINDS,
        claims: MAPPABLE_CLAIMS,
        form,
        action: base(req),
        error,
      },
      status,
    );
  }

  async function showProvider(
    req: Request,
    res: Response,
    form: Form | null = null,
    error: string | null = null,
    status = 200,
  ) {
    const actor = operatorActor(req, res);
    const provider = present(await s.admin.upstreamProviders.get(actor, platformId(req), providerId(req)));
    const linked = await s.admin.upstreamProviders.linkedCount(actor, platformId(req), provider.id);
    renderConsole(
      req,
      res,
      'upstream-provider',
      {
        title: provider.display_name,
        provider,
        linked,
        kindLabel: KINDS.find((k) => k.value === provider.kind)?.label ?? provider.kind,
        claims: MAPPABLE_CLAIMS,
        form: form ?? {
          ...NEW_FORM,
          kind: provider.kind,
          display_name: provider.display_name,
          slug: provider.slug,
          issuer: provider.issuer,
          api_base_url: provider.api_base_url ?? '',
          client_id: provider.client_id,
          scopes: provider.scopes.join(' '),
          claim_mapping: claimLines(provider.claim_mapping),
          trust_email: provider.trust_email ? 'yes' : 'no',
          trust_mfa: provider.trust_mfa,
          store_tokens: provider.store_tokens,
          enabled: provider.enabled,
        },
        listUrl: base(req),
        action: `${base(req)}/${provider.id}`,
        error,
      },
      status,
    );
  }

  r.get('/admin/platforms/:platformId/upstream-providers', (req, res) => showList(req, res));

  r.post('/admin/platforms/:platformId/upstream-providers', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const kind = field(req, 'kind');
        const input = parseInput(
          UpstreamProviderCreate,
          withoutUndefined({
            kind: kind || undefined,
            client_id: field(req, 'client_id'),
            client_secret: given(req, 'client_secret'),
            display_name: given(req, 'display_name'),
            slug: given(req, 'slug'),
            issuer: given(req, 'issuer'),
            // Fields of one kind only: left out for the others (the form shows them to every kind).
            tenant: kind === 'microsoft' ? given(req, 'tenant') : undefined,
            api_base_url: kind === 'github' ? given(req, 'api_base_url') : undefined,
            scopes: field(req, 'scopes') ? scopesOf(field(req, 'scopes')) : undefined,
            claim_mapping: claimMappingOf(field(req, 'claim_mapping')),
            trust_email: triState(field(req, 'trust_email')),
            trust_mfa: field(req, 'trust_mfa') === 'yes',
            store_tokens: field(req, 'store_tokens') === 'yes',
            enabled: field(req, 'enabled') === 'yes',
          }),
        );
        const p = await s.admin.upstreamProviders.create(operatorActor(req, res), platformId(req), input);
        return {
          message: `Provider "${p.displayName}" added. Register the callback URL below at ${p.displayName}.`,
          to: `${base(req)}/${p.id}`,
        };
      },
      (error, status) => showList(req, res, formOf(req), error, status),
    ),
  );

  r.get('/admin/platforms/:platformId/upstream-providers/:providerId', (req, res) => showProvider(req, res));

  r.post('/admin/platforms/:platformId/upstream-providers/:providerId', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const actor = operatorActor(req, res);
        const current = await s.admin.upstreamProviders.get(actor, platformId(req), providerId(req));
        const newSecret = given(req, 'client_secret');
        const removeSecret = field(req, 'remove_secret') === 'yes';
        if (newSecret && removeSecret)
          throw invalidRequest('client_secret: give a new secret or tick "Remove the secret", not both');
        const input = parseInput(
          UpstreamProviderUpdate,
          withoutUndefined({
            display_name: field(req, 'display_name'),
            slug: field(req, 'slug'),
            issuer: given(req, 'issuer'),
            tenant: current.kind === 'microsoft' ? given(req, 'tenant') : undefined,
            api_base_url: current.kind === 'github' ? given(req, 'api_base_url') : undefined,
            client_id: field(req, 'client_id'),
            client_secret: removeSecret ? null : newSecret,
            scopes: scopesOf(field(req, 'scopes')),
            claim_mapping: claimMappingOf(field(req, 'claim_mapping')),
            trust_email: field(req, 'trust_email') === 'yes',
            trust_mfa: field(req, 'trust_mfa') === 'yes',
            store_tokens: field(req, 'store_tokens') === 'yes',
            enabled: field(req, 'enabled') === 'yes',
          }),
        );
        const p = await s.admin.upstreamProviders.update(actor, platformId(req), current.id, input);
        return { message: 'Changes saved.', to: `${base(req)}/${p.id}` };
      },
      (error, status) => showProvider(req, res, formOf(req), error, status),
    ),
  );

  r.post('/admin/platforms/:platformId/upstream-providers/:providerId/delete', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const actor = operatorActor(req, res);
        const current = await s.admin.upstreamProviders.get(actor, platformId(req), providerId(req));
        if (field(req, 'confirm') !== 'yes') throw invalidRequest('tick "I understand" to remove the provider');
        const { identitiesUnlinked: n } = await s.admin.upstreamProviders.remove(actor, platformId(req), current.id);
        return {
          message: `Provider "${current.displayName}" removed${n ? `, with ${n} linked ${n === 1 ? 'account' : 'accounts'}` : ''}.`,
          to: base(req),
        };
      },
      (error, status) => showProvider(req, res, null, error, status),
    ),
  );

  return r;
}
