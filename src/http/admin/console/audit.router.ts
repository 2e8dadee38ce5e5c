import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import { AUDIT_EVENT_KINDS, type AuditEventKind, type AuditFilter } from '../../../domain/audit';
import { isUuid } from '../../../domain/ids';
import { invalidRequest, OAuthError } from '../../../errors';
import { assertPlatformAccess } from '../../../services/admin/access';
import { queryParam } from './forms';
import { operatorActor } from './operator';
import { renderConsole } from './render';

const PAGE = 50;
const FIELDS = ['platform', 'kind', 'subject', 'since', 'until'] as const;

/** A date (YYYY-MM-DD, UTC midnight) or a date and time; `endOfDay` makes a plain date include that whole day. `label`: the filter's label. */
function parseTime(label: string, value: string, endOfDay = false): Date | undefined {
  if (!value) return undefined;
  const plainDate = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const at = new Date(plainDate ? `${value}T00:00:00Z` : /[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(value))
    throw invalidRequest(`${label}: must be a date (YYYY-MM-DD) or a date and time`);
  return plainDate && endOfDay ? new Date(at.getTime() + 86_400_000) : at;
}

/** The audit log: filters (platform, kind, subject, since, until), newest first, "Older" pages by cursor. */
export function consoleAuditRouter(s: Services): Router {
  const r = Router();

  r.get('/admin/audit', async (req: Request, res: Response) => {
    const actor = operatorActor(req, res);
    const form = Object.fromEntries(FIELDS.map((f) => [f, queryParam(req, f)])) as Record<
      (typeof FIELDS)[number],
      string
    >;
    const before = queryParam(req, 'before');
    if (actor.platformId) form.platform = actor.platformId; // a platform operator sees its platform's events only
    let page: Awaited<ReturnType<Services['audit']['list']>> = { events: [], nextCursor: null };
    let error: string | null = null;
    try {
      if (form.platform && !isUuid(form.platform)) throw invalidRequest('Platform: must be a platform GUID');
      if (form.platform) assertPlatformAccess(actor, form.platform);
      if (form.kind && !(AUDIT_EVENT_KINDS as readonly string[]).includes(form.kind))
        throw invalidRequest(`unknown kind "${form.kind}"`);
      if (form.subject && !isUuid(form.subject)) throw invalidRequest('Subject (sub): must be a user id');
      if (before && !/^\d{1,18}$/.test(before)) throw invalidRequest('this page link is not one the console gave out');
      const filter: AuditFilter = {
        platformId: form.platform || undefined,
        kind: (form.kind || undefined) as AuditEventKind | undefined,
        subject: form.subject || undefined,
        since: parseTime('Since', form.since),
        until: parseTime('Until', form.until, true),
        before: before || undefined,
      };
      page = await s.audit.list(filter, PAGE);
    } catch (err) {
      if (!(err instanceof OAuthError) || err.status >= 500) throw err;
      error = err.description;
    }
    const platforms = actor.platformId ? [] : (await s.admin.platforms.list(actor, { limit: 200 })).items;
    const query = new URLSearchParams(Object.entries(form).filter(([, v]) => v !== ''));
    if (page.nextCursor) query.set('before', page.nextCursor);
    renderConsole(
      req,
      res,
      'audit',
      {
        title: 'Audit log',
        form,
        kinds: AUDIT_EVENT_KINDS,
        platforms,
        platformNames: Object.fromEntries(platforms.map((p) => [p.id, p.name])),
        scoped: actor.platformId !== null,
        events: page.events,
        olderUrl: page.nextCursor ? `/admin/audit?${query}` : null,
        newestUrl: before
          ? `/admin/audit?${new URLSearchParams(Object.entries(form).filter(([, v]) => v !== ''))}`
          : null,
        error,
      },
      error ? 400 : 200,
    );
  });

  return r;
}
