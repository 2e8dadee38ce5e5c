import type { Request } from 'express';
import type { PendingUpstream } from '../../services/federation/upstream-client';
import type { AccountSection } from '../urls';

/** What an upstream sign-in is for: an authorization's interaction, or the account page's sign-in (ending on `section`, its tab). */
export type UpstreamPurpose = { kind: 'interaction'; iid: string } | { kind: 'account'; section?: AccountSection };

export interface PendingUpstreamEntry {
  platformId: string;
  purpose: UpstreamPurpose;
  pending: PendingUpstream;
  /** Epoch milliseconds (the server's clock: the session's own lifetime is measured by it too). */
  startedAt: number;
}

declare module 'express-session' {
  interface SessionData {
    /**
     * Upstream sign-ins in progress, by their `state`: PKCE verifier, nonce and where
     * the callback goes on. A few at a time (tabs), ten minutes each, used once.
     */
    upstreamSignIns: Record<string, PendingUpstreamEntry>;
  }
}

const MAX_PENDING = 5;
const UPSTREAM_PENDING_TTL_MS = 10 * 60 * 1000;

const live = (req: Request) =>
  Object.entries(req.session.upstreamSignIns ?? {}).filter(
    ([, e]) => Date.now() - e.startedAt < UPSTREAM_PENDING_TTL_MS,
  );

/** Remembers a sign-in sent to the upstream (the oldest beyond a few are dropped). */
export function rememberUpstream(req: Request, entry: Omit<PendingUpstreamEntry, 'startedAt'>): void {
  const kept = live(req)
    .sort(([, a], [, b]) => b.startedAt - a.startedAt)
    .slice(0, MAX_PENDING - 1);
  req.session.upstreamSignIns = Object.fromEntries([
    [entry.pending.state, { ...entry, startedAt: Date.now() }],
    ...kept,
  ]);
}

/** The pending sign-in of this `state`, removed whatever comes next (used once); undefined when unknown or expired. */
export function takeUpstream(req: Request, state: string | undefined): PendingUpstreamEntry | undefined {
  const all = req.session.upstreamSignIns;
  if (!state || !all || !Object.hasOwn(all, state)) return undefined;
  const entry = all[state];
  delete all[state];
  if (Object.keys(all).length === 0) delete req.session.upstreamSignIns;
  return Date.now() - entry.startedAt < UPSTREAM_PENDING_TTL_MS ? entry : undefined;
}
