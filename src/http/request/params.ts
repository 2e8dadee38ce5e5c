import { z } from 'zod';
import { invalidRequest } from '../../errors';

/** Flattens a parsed query/body: a repeated parameter is invalid_request (OAuth 2.0 §3.1). */
export function singleValued(input: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!input || typeof input !== 'object') return out;
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    if (Array.isArray(value)) throw invalidRequest(`parameter "${key}" must not be repeated`);
    if (typeof value === 'string') out[key] = value;
    else if (value !== undefined) throw invalidRequest(`parameter "${key}" is malformed`);
  }
  return out;
}

/** Parses OAuth parameters with a zod schema; the first issue becomes invalid_request. */
export function parseOAuth<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(singleValued(input));
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue.path.join('.');
  if (issue.code === 'invalid_type' && issue.input === undefined)
    throw invalidRequest(`missing required parameter "${name}"`);
  throw invalidRequest(name ? `invalid parameter "${name}": ${issue.message}` : issue.message);
}

/** A required, non-empty, bounded string parameter. */
export const param = (max = 2048) =>
  z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
