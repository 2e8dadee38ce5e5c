import type { Knex } from 'knex';
import { digest } from '../../src/crypto/digest';

/**
 * A storm of token requests for the chaos tests (test/scale/chaos.test.ts): one client loop per
 * entry of `codes`, all at once, each exchanging its own codes and rotating the refresh-token
 * chains they start, across the given instances in turn. Each loop behaves as a careful client would:
 * - a refresh whose answer is lost (socket error, 503) is sent again with the same, last good
 *   token: on the next instance at once after a socket error, after a short pause after a 503
 *   (the pause, not the 5 s of Retry-After, keeps the test short);
 * - a code whose answer is lost is never sent again (a code is single-use; the client starts a
 *   new authorization), and counts as lost.
 * `ledger` then compares what the loops were told with what the database holds.
 */

export interface Target {
  name: string;
  url: string;
}
export interface Answer {
  loop: number;
  target: string;
  action: 'refresh' | 'exchange';
  phase: string;
  status: number;
  error?: string;
  retryAfter: string | null;
}
export interface SocketFailure {
  loop: number;
  target: string;
  action: 'refresh' | 'exchange';
  /** The phase when it failed (an answer's is the phase it was sent in). */
  phase: string;
  cause: string;
}
/** A request sent and not answered yet, with the code or refresh token it presented. */
export interface Pending {
  target: string;
  action: Answer['action'];
  credential: string;
}
/** A refresh-token chain as its client knows it: the code that started it, every token received. */
export interface Chain {
  code: string;
  tokens: string[];
}
export interface StormClient {
  platformId: string;
  client: { id: string; secret: string | null; redirectUris: string[] };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function startTokenStorm(o: {
  fixture: StormClient;
  targets: () => Target[];
  /** Each loop's codes, in the order it exchanges them (every fifth request, and whenever it holds no chain). */
  codes: string[][];
  phase: () => string;
}) {
  const { platformId, client } = o.fixture;
  const authorization = `Basic ${Buffer.from(`${client.id}:${encodeURIComponent(client.secret!)}`).toString('base64')}`;
  const answers: Answer[] = [];
  const failures: SocketFailure[] = [];
  const chains: Chain[][] = o.codes.map(() => []);
  const lostCodes: string[] = [];
  const inFlight = new Set<Pending>();
  let running = true;

  /** One POST to the token endpoint; undefined when it failed at the socket (recorded). */
  const post = async (loop: number, target: Target, action: Answer['action'], body: Record<string, string>) => {
    const sentIn = o.phase();
    const pending: Pending = { target: target.name, action, credential: body.code ?? body.refresh_token };
    inFlight.add(pending);
    try {
      const res = await fetch(`${target.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ platform_guid: platformId, ...body }).toString(),
        signal: AbortSignal.timeout(20_000), // a hung request is a finding, not a wait
      });
      const json = await res.json().catch(() => ({}));
      const answer = {
        loop,
        target: target.name,
        action,
        phase: sentIn,
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
      };
      answers.push(json.error ? { ...answer, error: json.error } : answer);
      return { status: res.status, json };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const cause = e.name === 'TimeoutError' ? 'TimeoutError' : (e.cause?.code ?? e.cause?.message ?? e.message);
      failures.push({ loop, target: target.name, action, phase: o.phase(), cause });
      return undefined;
    } finally {
      inFlight.delete(pending);
    }
  };

  const exchange = async (loop: number, step: number, code: string) => {
    const targets = o.targets();
    const res = await post(loop, targets[(loop + step) % targets.length], 'exchange', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUris[0],
    });
    if (res?.status === 200) chains[loop].push({ code, tokens: [res.json.refresh_token] });
    else {
      lostCodes.push(code);
      if (res?.status === 503) await sleep(100);
    }
  };

  const refresh = async (loop: number, step: number, chain: Chain) => {
    const targets = o.targets();
    const body = { grant_type: 'refresh_token', refresh_token: chain.tokens.at(-1)! };
    let res = await post(loop, targets[(loop + step) % targets.length], 'refresh', body);
    if (!res) res = await post(loop, targets[(loop + step + 1) % targets.length], 'refresh', body);
    if (res?.status === 200) chain.tokens.push(res.json.refresh_token);
    else if (res?.status === 503) await sleep(100);
  };

  const run = async (loop: number) => {
    const codes = [...o.codes[loop]];
    for (let step = 0; running; step++) {
      const mine = chains[loop];
      if (codes.length && (!mine.length || step % 5 === 4)) await exchange(loop, step, codes.shift()!);
      else if (mine.length) await refresh(loop, step, mine[step % mine.length]);
      else return; // every code lost: nothing left to do
    }
  };
  const loops = o.codes.map((_, i) => sleep(i * 5).then(() => run(i)));

  return {
    answers,
    failures,
    chains,
    lostCodes,
    /** The codes and refresh tokens of the requests sent to `target` and not answered yet. */
    inFlight: (target: string) => [...inFlight].filter((p) => p.target === target),
    isInFlight: (pending: Pending) => inFlight.has(pending),
    /** Answers with this status so far, in these phases. */
    count: (status: number, phases: string[]) =>
      answers.filter((a) => a.status === status && phases.includes(a.phase)).length,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
    /**
     * Nothing lost: every chain's last token refreshes once more (503s retried, bounded), and the
     * chain records the answer. Returns what did not answer 200.
     */
    async finalRefresh(target: Target) {
      const refused: Array<{ status: number | undefined; error?: string }> = [];
      for (const chain of chains.flat()) {
        let res;
        for (let i = 0; i < 50 && (!res || res.status === 503); i++) {
          if (i) await sleep(200);
          res = await post(-1, target, 'refresh', { grant_type: 'refresh_token', refresh_token: chain.tokens.at(-1)! });
        }
        if (res?.status === 200) chain.tokens.push(res.json.refresh_token);
        else refused.push({ status: res?.status, error: res?.json.error });
      }
      return refused;
    },
  };
}

export type TokenStorm = ReturnType<typeof startTokenStorm>;

/**
 * What the database holds for the storm's client, against what the loops were told. Every list
 * is empty when nothing was lost and nothing doubled:
 * - `codesNotOnce`: a code neither unused (not consumed, no grant) nor used once (consumed, one
 *   refresh-token family, which its access tokens live by);
 * - `familiesNotOneHead`: a family revoked, or without exactly one live (unrotated) refresh token;
 * - `chainsDiffering`: a chain whose family is missing, holds a refresh token its client was never
 *   given or lacks one it was, or whose live token is not the client's last;
 * - `unknownFamilies`: a family whose code was neither answered 200 nor lost (sent, no answer).
 */
export async function ledger(db: Knex, storm: TokenStorm, clientId: string, allCodes: string[]) {
  const codes: Array<{ id: string; code_hash: string; consumed_at: Date | null }> = await db('authorization_codes')
    .where({ client_id: clientId })
    .select('id', 'code_hash', 'consumed_at');
  const families: Array<{ id: string; code_id: string; revoked_at: Date | null }> = await db('refresh_token_families')
    .where({ client_id: clientId })
    .select('id', 'code_id', 'revoked_at');
  const tokens: Array<{ family_id: string; token_hash: string; rotated_at: Date | null }> = await db('refresh_tokens')
    .whereIn(
      'family_id',
      families.map((f) => f.id),
    )
    .select('family_id', 'token_hash', 'rotated_at');

  const codeIdOf = new Map(codes.map((c) => [c.code_hash, c.id]));
  const familyOfCode = (codeId: string | undefined) => families.filter((f) => f.code_id === codeId);
  const tokensOf = (familyId: string) => tokens.filter((t) => t.family_id === familyId);

  const codesNotOnce = codes
    .map((c) => ({
      code: c.id,
      consumed: c.consumed_at !== null,
      families: familyOfCode(c.id).length,
    }))
    // A consumed code issued exactly one family (its access tokens have no row: they live by it).
    .filter((c) => c.families !== (c.consumed ? 1 : 0));
  const familiesNotOneHead = families
    .map((f) => ({
      family: f.id,
      revoked: f.revoked_at !== null,
      heads: tokensOf(f.id).filter((t) => !t.rotated_at).length,
    }))
    .filter((f) => f.revoked || f.heads !== 1);
  const chainsDiffering = storm.chains.flat().flatMap((chain) => {
    const [family] = familyOfCode(codeIdOf.get(digest(chain.code)));
    const held = family ? tokensOf(family.id) : [];
    const given = [...new Set(chain.tokens.map(digest))].sort();
    const stored = held.map((t) => t.token_hash).sort();
    const head = held.find((t) => !t.rotated_at)?.token_hash;
    const same = family && JSON.stringify(given) === JSON.stringify(stored) && head === digest(chain.tokens.at(-1)!);
    return same ? [] : [{ code: chain.code, family: family?.id, given: given.length, stored: stored.length }];
  });
  const accounted = new Set([...storm.chains.flat().map((c) => c.code), ...storm.lostCodes].map(digest));
  const unknownFamilies = families.filter((f) => !codes.some((c) => c.id === f.code_id && accounted.has(c.code_hash)));
  return {
    problems: {
      codesIssued: codes.length === allCodes.length,
      codesNotOnce,
      familiesNotOneHead,
      chainsDiffering,
      unknownFamilies,
    },
  };
}

/** Those of the in-flight requests whose code or refresh token the database already shows as spent. */
export async function spentInDatabase(db: Knex, pending: Pending[]) {
  const hashes = (action: Answer['action']) =>
    pending.filter((p) => p.action === action).map((p) => digest(p.credential));
  const [codes, rotated] = await Promise.all([
    db('authorization_codes').whereIn('code_hash', hashes('exchange')).whereNotNull('consumed_at').pluck('code_hash'),
    db('refresh_tokens').whereIn('token_hash', hashes('refresh')).whereNotNull('rotated_at').pluck('token_hash'),
  ]);
  const spent = new Set([...codes, ...rotated]);
  return pending.filter((p) => spent.has(digest(p.credential)));
}
