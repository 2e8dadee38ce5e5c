import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import type { HttpDeps } from '../../http-deps';
import { field, queryParam, submitForm } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';
import { parseInput } from '../../../services/admin/parse-input';
import { KeyRotate } from '../../../wire/admin/keys.schemas';
import { PlatformUpdate } from '../../../wire/admin/platforms.schemas';
import { SIGNING_ALGS } from '../../../domain/signing-key';
import { issuerOf, REGISTRATION_POLICIES, SIGNING_PROFILES } from '../../../domain/platform';

const utc = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const PAGE = 50;

/** A platform's signing profile (switch) and signing keys (s.admin.keys): kid, algorithm, status and dates (never the material); rotate, retire. */
export function consoleKeysRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/keys`;

  async function show(req: Request, res: Response, error: string | null = null, status = 200) {
    const cursor = queryParam(req, 'cursor') || undefined;
    const page = await s.admin.keys.list(operatorActor(req, res), String(req.params.platformId), {
      limit: PAGE,
      cursor,
    });
    const platform = await s.admin.platforms.get(operatorActor(req, res), String(req.params.platformId));
    renderConsole(
      req,
      res,
      'keys',
      {
        title: 'Keys',
        keys: page.items,
        nextUrl: page.nextCursor ? `${base(req)}?cursor=${encodeURIComponent(page.nextCursor)}` : null,
        firstUrl: cursor ? base(req) : null,
        accessTokenTtlSeconds: deps.config.accessTokenTtlSeconds,
        publicationSeconds: deps.config.signingKeyPublicationSeconds,
        // Standard platforms rotate one algorithm at a time; a seed platform has its HS512 key only.
        algs: platform.signingProfile === 'standard' ? SIGNING_ALGS : null,
        profile: platform.signingProfile,
        profiles: SIGNING_PROFILES,
        issuer: issuerOf(deps.config.baseUrl, platform),
        // Self-registration belongs to standard platforms (a seed platform keeps the spec's interface).
        registration:
          platform.signingProfile === 'standard'
            ? {
                policy: platform.registration,
                policies: REGISTRATION_POLICIES,
                documents: platform.clientMetadataDocuments,
                tokensUrl: `/admin/platforms/${platform.id}/registration-tokens`,
              }
            : null,
        action: base(req),
        error,
      },
      status,
    );
  }

  r.get('/admin/platforms/:platformId/keys', (req, res) => show(req, res));

  r.post('/admin/platforms/:platformId/keys/rotate', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const { alg, immediately } = parseInput(KeyRotate, {
          alg: field(req, 'alg') || undefined,
          ...(field(req, 'immediately') === 'yes' ? { immediately: true } : {}),
        });
        const r = await s.admin.keys.rotate(operatorActor(req, res), String(req.params.platformId), alg, {
          immediately,
        });
        if (r.alg !== 'HS512' && !immediately && r.activatesAt) {
          return {
            message: `New ${r.alg} key ${r.kid}: published now, signs from ${utc(r.activatesAt)}. Until then the previous key signs; then it verifies its tokens until they expire.`,
            to: base(req),
          };
        }
        const which = r.alg === 'HS512' ? '' : `${r.alg} `;
        return {
          message: `New active ${which}key ${r.kid}. The previous key verifies its tokens until they expire.`,
          to: base(req),
        };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  // The same change, checks and audit (platform.updated, signing_profile {from, to}, keys_created) as PATCH /admin/api/platforms/{guid}.
  r.post('/admin/platforms/:platformId/keys/profile', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const input = parseInput(PlatformUpdate, { signing_profile: field(req, 'signing_profile') });
        const platform = await s.admin.platforms.update(operatorActor(req, res), String(req.params.platformId), input);
        const issuer = issuerOf(deps.config.baseUrl, platform);
        const what =
          platform.signingProfile === 'standard'
            ? 'tokens are signed RS256 (ID tokens per client) and the JWKS publishes the public keys'
            : 'tokens are signed HS512 and the JWKS lists oct descriptors only';
        return {
          message: `Signing profile: ${platform.signingProfile}. The issuer is ${issuer}; ${what}. Reconfigure the platform's relying parties.`,
          to: base(req),
        };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  // The same change, checks and audit (platform.updated, registration / client_metadata_documents {from, to}) as PATCH /admin/api/platforms/{guid}.
  r.post('/admin/platforms/:platformId/keys/self-registration', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const input = parseInput(PlatformUpdate, {
          registration: field(req, 'registration'),
          client_metadata_documents: field(req, 'client_metadata_documents'),
        });
        const platform = await s.admin.platforms.update(operatorActor(req, res), String(req.params.platformId), input);
        return {
          message: `Client registration: ${platform.registration}; client ID metadata documents: ${platform.clientMetadataDocuments}.`,
          to: base(req),
        };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  r.post('/admin/platforms/:platformId/keys/retire', (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const key = await s.admin.keys.retire(
          operatorActor(req, res),
          String(req.params.platformId),
          field(req, 'kid'),
        );
        return { message: `Key ${key.kid} retired: the tokens it signed no longer verify.`, to: base(req) };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  return r;
}
