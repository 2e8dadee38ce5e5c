import type { z } from 'zod';
import { invalidRequest } from '../../errors';

/**
 * Validates admin input (API body/query, CLI flags turned into the same shape) with the schema the
 * OpenAPI document is generated from, so the API, the CLI and the console say the same thing.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const messages = result.error.issues.map((issue) => {
    const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
    return `${where}${issue.message}`;
  });
  throw invalidRequest(messages.join('; '));
}
