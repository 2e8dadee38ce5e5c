import type { z } from 'zod';
import type { Throttle } from '../../wire/admin/throttles.schemas';
import type { ThrottleEntry } from '../../services/attempt-throttle.service';

/** A throttle key as operators read it: the email only as its SHA-256, times in ISO and seconds. */
export function presentThrottle(e: ThrottleEntry): z.infer<typeof Throttle> {
  return {
    kind: e.kind,
    platform_guid: e.platformId,
    email_sha256: e.emailSha256,
    source: e.source,
    failures: e.failures,
    locks: e.locks,
    locked_until: e.lockedUntil?.toISOString() ?? null,
    locked_seconds: e.lockedSeconds,
  };
}
