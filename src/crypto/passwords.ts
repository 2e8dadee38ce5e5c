import argon2 from 'argon2';

export interface Argon2Params {
  memoryCost: number;
  timeCost: number;
}

/** argon2id with at least OWASP's m=19 MiB, t=2, p=1 (DESIGN §3). Runs on libuv's pool, off the event loop. */
export function hashPassword(password: string, params: Argon2Params): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id, memoryCost: params.memoryCost, timeCost: params.timeCost, parallelism: 1 });
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

// A fixed hash to verify against when the account does not exist, so timing does not reveal it.
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(params: Argon2Params): Promise<string> {
  dummyHash ??= hashPassword('latchkey-dummy-password', params);
  return dummyHash;
}
