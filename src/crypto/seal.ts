import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** AES-256-GCM under MASTER_KEY for secrets that must be recoverable (client secrets, signing keys). */
export interface Sealer {
  seal(plaintext: Buffer | string): string;
  unseal(sealed: string): Buffer;
}

/**
 * Seals under `masterKey`; unseals under it or, while a rotation is under way, under
 * `previousKey` (GCM's tag tells which key a value was sealed with).
 */
export function createSealer(masterKey: string, previousKey?: string): Sealer {
  const current = singleKeySealer(masterKey);
  if (!previousKey) return current;
  const previous = singleKeySealer(previousKey);
  return {
    seal: current.seal,
    unseal(sealed) {
      try {
        return current.unseal(sealed);
      } catch {
        return previous.unseal(sealed);
      }
    },
  };
}

function singleKeySealer(masterKey: string): Sealer {
  const key = Buffer.from(masterKey, 'base64url');
  if (key.length !== 32) throw new Error('MASTER_KEY must decode to 32 bytes');
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return [
        VERSION,
        iv.toString('base64url'),
        body.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
      ].join('.');
    },
    unseal(sealed) {
      const [version, iv, body, tag] = sealed.split('.');
      if (version !== VERSION || !iv || !body || !tag) throw new Error('Unrecognised sealed value');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
    },
  };
}
