import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256, base64url: how codes, refresh tokens and access-token ids are stored. */
export function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** Constant-time string comparison (hashes first, so lengths never leak). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
