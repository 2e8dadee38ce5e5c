import os from 'node:os';
import argon2 from 'argon2';

export interface Argon2Params {
  memoryCost: number;
  timeCost: number;
}

// argon2 runs on libuv's thread pool, off the event loop. At most one hash per core at a time:
// more would only add memory (19 MiB each) and queueing inside the pool, and starve other work.
const MAX_CONCURRENT = Math.max(1, os.availableParallelism());
let running = 0;
const waiting: (() => void)[] = [];

async function bounded<T>(work: () => Promise<T>): Promise<T> {
  // A finishing hash hands its slot straight to the next waiter, so the bound always holds.
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** argon2id with at least OWASP's m=19 MiB, t=2, p=1. */
export function hashPassword(password: string, params: Argon2Params): Promise<string> {
  return bounded(() =>
    argon2.hash(password, {
      type: argon2.argon2id,
      memoryCost: params.memoryCost,
      timeCost: params.timeCost,
      parallelism: 1,
    }),
  );
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await bounded(() => argon2.verify(hash, password));
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
