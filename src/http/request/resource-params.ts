import type { Platform } from '../../domain/platform';
import { invalidRequest } from '../../errors';

/**
 * RFC 8707's `resource`, the one parameter that may be repeated, taken out of a parsed query or
 * body on a standard platform; the rest is left for the single-valued parsing of every other
 * parameter. On a seed platform nothing is taken: `resource` is an unknown parameter there, ignored
 * once and a repeated-parameter error when repeated, as before resources existed.
 */
export function resourceParams(
  platform: Pick<Platform, 'signingProfile'>,
  input: unknown,
): { body: Record<string, unknown>; resource: string[] | undefined } {
  const { resource, ...rest } = (input ?? {}) as Record<string, unknown>;
  if (platform.signingProfile !== 'standard' || resource === undefined)
    return { body: (input ?? {}) as Record<string, unknown>, resource: undefined };
  const values = [resource].flat();
  if (values.some((v) => typeof v !== 'string')) throw invalidRequest('parameter "resource" is malformed');
  return { body: rest, resource: values as string[] };
}
