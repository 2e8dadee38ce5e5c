import { createHmac, hkdfSync } from 'node:crypto';

/**
 * HMAC-SHA256 (base64url) under a key derived from MASTER_KEY with HKDF (RFC 5869), one key per
 * purpose: the `info` string separates the domains, so the master key itself never keys a MAC and
 * two purposes never share a key. Every instance sharing MASTER_KEY computes the same values.
 */
export function createKeyedDigest(masterKey: string, purpose: string): (value: string) => string {
  const ikm = Buffer.from(masterKey, 'base64url');
  if (ikm.length !== 32) throw new Error('MASTER_KEY must decode to 32 bytes');
  const key = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), `latchkey/${purpose}`, 32));
  return (value) => createHmac('sha256', key).update(value, 'utf8').digest('base64url');
}
