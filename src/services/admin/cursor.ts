import { invalidRequest } from '../../errors';

/**
 * Opaque keyset cursors for admin lists: the sort key of the last row of a page (a time and an
 * id), base64url JSON. Keyset, not offset: a page stays right while rows are added.
 */
export interface Keyset {
  at: string;
  id: string;
}

function encodeCursor(k: { at: Date; id: string }): string {
  return Buffer.from(JSON.stringify({ at: k.at.toISOString(), id: k.id })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): Keyset | undefined {
  if (cursor === undefined) return undefined;
  try {
    const k = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Keyset;
    if (typeof k.at === 'string' && !Number.isNaN(Date.parse(k.at)) && typeof k.id === 'string' && k.id.length <= 100)
      return k;
  } catch {
    // fall through
  }
  throw invalidRequest('cursor is not one this server gave out');
}

/** Fetches limit+1 rows; returns the page and the next cursor. */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => { at: Date; id: string }) {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? encodeCursor(keyOf(items[items.length - 1])) : null };
}
