import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A software WebAuthn authenticator for service-level tests: a real P-256 key, real CBOR,
 * attestation "none", signatures over authenticatorData ‖ SHA-256(clientDataJSON) as a browser
 * and an authenticator produce them (WebAuthn L3 §6.1, §6.3.3). The browser tests use Chromium's
 * virtual authenticator instead; this one lets a test set the flags (UV, backup) directly.
 */
export interface SoftCredential {
  id: string;
  privateKey: KeyObject;
  userHandle: string;
  counter: number;
}

type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor> | { [k: string]: Cbor };

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

export function cbor(v: Cbor): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === 'string') return Buffer.concat([head(3, Buffer.byteLength(v)), Buffer.from(v)]);
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), Buffer.from(v)]);
  if (Array.isArray(v)) return Buffer.concat([head(4, v.length), ...v.map(cbor)]);
  const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, x]) => [cbor(k), cbor(x)])]);
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();
const b64u = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');

export interface Flags {
  /** User verified (PIN, biometrics). */
  uv?: boolean;
  /** Backup eligible (a synced passkey). */
  be?: boolean;
  /** Backed up. */
  bs?: boolean;
}

function flagsByte(f: Flags, attested: boolean): number {
  return 0x01 | (f.uv ? 0x04 : 0) | (f.be ? 0x08 : 0) | (f.bs ? 0x10 : 0) | (attested ? 0x40 : 0);
}

function clientData(type: string, challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

/** navigator.credentials.create() answered: the credential and the JSON the browser script posts. */
export function createCredential(
  options: { challenge: string; rp: { id?: string }; user: { id: string } },
  origin: string,
  flags: Flags = { uv: true },
) {
  const rpId = options.rp.id!;
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const coseKey = new Map<Cbor, Cbor>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, Buffer.from(jwk.x!, 'base64url')],
    [-3, Buffer.from(jwk.y!, 'base64url')],
  ]);
  const credId = randomBytes(32);
  const idLen = Buffer.from([credId.length >> 8, credId.length & 0xff]);
  const authData = Buffer.concat([
    sha256(rpId),
    Buffer.from([flagsByte(flags, true)]),
    Buffer.alloc(4),
    Buffer.alloc(16),
    idLen,
    credId,
    cbor(coseKey),
  ]);
  const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData });
  const credential: SoftCredential = { id: b64u(credId), privateKey, userHandle: options.user.id, counter: 0 };
  const json = {
    id: credential.id,
    rawId: credential.id,
    type: 'public-key',
    response: {
      clientDataJSON: b64u(clientData('webauthn.create', options.challenge, origin)),
      attestationObject: b64u(attestationObject),
      transports: ['internal'],
    },
    clientExtensionResults: {},
  };
  return { credential, json: JSON.stringify(json) };
}

/** navigator.credentials.get() answered with this credential; the counter goes up by one unless `counter` is given. */
export function getAssertion(
  cred: SoftCredential,
  options: { challenge: string; rpId?: string },
  origin: string,
  flags: Flags = { uv: true },
  counter = cred.counter + 1,
) {
  cred.counter = counter;
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  const authData = Buffer.concat([sha256(options.rpId!), Buffer.from([flagsByte(flags, false)]), count]);
  const cd = clientData('webauthn.get', options.challenge, origin);
  const signature = sign('sha256', Buffer.concat([authData, sha256(cd)]), cred.privateKey);
  return JSON.stringify({
    id: cred.id,
    rawId: cred.id,
    type: 'public-key',
    response: {
      clientDataJSON: b64u(cd),
      authenticatorData: b64u(authData),
      signature: b64u(signature),
      userHandle: cred.userHandle,
    },
    clientExtensionResults: {},
  });
}
