import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import type { HttpDeps } from '../../http-deps';
import { RATE_LIMITED_ENDPOINTS, type RateLimitedEndpoint } from '../../../domain/platform';
import { invalidRequest } from '../../../errors';
import { parseInput } from '../../../services/admin/parse-input';
import { RateLimitSet } from '../../../wire/admin/platforms.schemas';
import { presentRateLimits } from '../../../presenters/admin/platform.presenter';
import { field, submitForm } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';

const isEndpoint = (value: string): value is RateLimitedEndpoint =>
  (RATE_LIMITED_ENDPOINTS as readonly string[]).includes(value);

/** A platform's rate limits: per endpoint the spec's limit, the override and the one in force; set or reset an override. */
export function consoleRateLimitsRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const base = (req: Request) => `/admin/platforms/${req.params.platformId}/rate-limits`;

  async function show(
    req: Request,
    res: Response,
    form: { endpoint?: string; value?: string; error?: string } = {},
    status = 200,
  ) {
    const platform = await s.admin.platforms.get(operatorActor(req, res), String(req.params.platformId));
    renderConsole(
      req,
      res,
      'rate-limits',
      {
        title: 'Rate limits',
        limits: presentRateLimits(platform).limits,
        scale: deps.config.rateLimitScale,
        action: base(req),
        failedEndpoint: form.endpoint ?? null,
        failedValue: form.value ?? '',
        error: form.error ?? null,
      },
      status,
    );
  }

  r.get('/admin/platforms/:platformId/rate-limits', (req, res) => show(req, res));

  r.post('/admin/platforms/:platformId/rate-limits/:endpoint', (req, res) => {
    const endpoint = String(req.params.endpoint);
    const reset = field(req, 'action') === 'reset';
    return submitForm(
      req,
      res,
      async () => {
        if (!isEndpoint(endpoint)) throw invalidRequest(`unknown endpoint "${endpoint}"`);
        const perMinute = reset
          ? null
          : parseInput(RateLimitSet, {
              per_minute: field(req, 'per_minute') === '' ? undefined : Number(field(req, 'per_minute')),
            }).per_minute;
        await s.admin.platforms.setRateLimit(
          operatorActor(req, res),
          String(req.params.platformId),
          endpoint,
          perMinute,
        );
        return {
          message:
            perMinute === null
              ? `${endpoint}: back to the default limit.`
              : `${endpoint}: ${perMinute} requests per minute.`,
          to: base(req),
        };
      },
      (error, status) => show(req, res, { endpoint, value: field(req, 'per_minute'), error }, status),
    );
  });

  return r;
}
