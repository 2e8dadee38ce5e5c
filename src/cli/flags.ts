import { invalidRequest } from '../errors';
import { parseFlags } from './args';

export type Flags = ReturnType<typeof parseFlags>['flags'];

/** The value of `--name`, given at most once. */
export function one(flags: Flags, name: string, required: true): string;
export function one(flags: Flags, name: string, required?: false): string | undefined;
export function one(flags: Flags, name: string, required = false): string | undefined {
  const values = flags.get(name);
  if (!values) {
    if (required) throw invalidRequest(`--${name} is required`);
    return undefined;
  }
  if (values.length > 1) throw invalidRequest(`--${name} may be given once`);
  if (values[0] === true) throw invalidRequest(`--${name} needs a value`);
  return values[0];
}

/** Every value of a repeatable `--name`. */
export function many(flags: Flags, name: string): string[] {
  return (flags.get(name) ?? []).map((v) => {
    if (v === true) throw invalidRequest(`--${name} needs a value`);
    return v;
  });
}

/** A flag without a value, e.g. `--locked`. */
export function switchFlag(flags: Flags, name: string): boolean {
  const values = flags.get(name);
  if (!values) return false;
  if (values.length > 1 || values[0] !== true) throw invalidRequest(`--${name} takes no value`);
  return true;
}

/** `--limit N` and `--cursor C`, in the admin API's PageQuery shape (validated by its schema). */
export function pageFlags(flags: Flags): { limit?: string; cursor?: string } {
  return { limit: one(flags, 'limit'), cursor: one(flags, 'cursor') };
}

export function checkKnown(flags: Flags, allowed: readonly string[]) {
  for (const name of flags.keys()) if (!allowed.includes(name)) throw invalidRequest(`unknown option --${name}`);
}
