import { z } from 'zod';
import { AUDIT_EVENT_KINDS, type AuditActorType } from '../../domain/audit';
import { pageOf, PageQuery, Timestamp, Uuid } from './common.schemas';

const AUDIT_ACTOR_TYPES = [
  'user',
  'admin_token',
  'operator',
  'cli',
  'system',
  'anonymous',
  'client',
] as const satisfies readonly AuditActorType[];

const IsoTime = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time, e.g. 2026-11-24T10:00:00Z' })
  .meta({ format: 'date-time' });

export const AuditEvent = z
  .object({
    id: z.string().meta({ description: 'Increasing with time' }),
    occurred_at: Timestamp,
    kind: z.enum(AUDIT_EVENT_KINDS),
    actor_type: z.enum(AUDIT_ACTOR_TYPES),
    actor_id: z
      .string()
      .nullable()
      .meta({ description: 'The user, admin token or operator id; null for the CLI and the system' }),
    actor_name: z.string().nullable(),
    platform_guid: Uuid.nullable().meta({
      description: 'null: an event of no platform (admin tokens, operators, MASTER_KEY)',
    }),
    subject: z.string().nullable().meta({ description: 'The user concerned (sub), or the resource' }),
    client_id: z.string().nullable(),
    source: z.string().nullable().meta({ description: 'Source address of the request' }),
    user_agent: z.string().nullable(),
    request_id: z.string().nullable(),
    details: z
      .record(z.string(), z.unknown())
      .meta({ description: 'What happened or changed ({field: {from, to}}); never a secret' }),
  })
  .meta({ id: 'AuditEvent' });

export const AuditEventPage = pageOf(AuditEvent, 'AuditEventPage');

/** The filters of an audit list; `since` inclusive, `until` exclusive. */
export const AuditQuery = PageQuery.extend({
  kind: z.enum(AUDIT_EVENT_KINDS).optional(),
  subject: Uuid.optional().meta({ description: 'The user (sub) concerned' }),
  client_id: Uuid.optional(),
  actor_type: z.enum(AUDIT_ACTOR_TYPES).optional(),
  since: IsoTime.optional().meta({ description: 'Events at or after this time' }),
  until: IsoTime.optional().meta({ description: 'Events before this time' }),
}).strict();

export const AuditAllQuery = AuditQuery.extend({
  platform_guid: Uuid.optional().meta({ description: "Only this platform's events" }),
}).strict();
