import { z } from 'zod';
import { ADMIN_PAGE_DEFAULT, ADMIN_PAGE_MAX } from '../../domain/admin';

/**
 * Shapes shared by every admin resource. Each schema validates input (API, CLI, console) and
 * describes it in the OpenAPI document (`.meta({ id })` names a reusable component).
 */
export const ErrorResponse = z
  .object({ error: z.string().meta({ example: 'invalid_request' }), error_description: z.string() })
  .meta({ id: 'Error', description: 'Every error, as in the rest of the provider: `{error, error_description}`' });

export const Uuid = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID');

export const PlatformParams = z.object({ platform_guid: Uuid.meta({ description: 'The platform' }) });

export const Timestamp = z.string().meta({ format: 'date-time', example: '2026-11-24T10:00:00.000Z' });

/** `?limit=&cursor=`: list endpoints are cursor-paged, newest first unless a resource says otherwise. */
export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(ADMIN_PAGE_MAX)
    .default(ADMIN_PAGE_DEFAULT)
    .meta({ description: `Page size, 1 to ${ADMIN_PAGE_MAX}` }),
  cursor: z.string().max(500).optional().meta({ description: 'The next_cursor of the previous page' }),
});

/** A page of `item`s and the cursor of the next page (null on the last). */
export function pageOf<T extends z.ZodType>(item: T, id: string) {
  return z.object({ items: z.array(item), next_cursor: z.string().nullable() }).meta({ id });
}
