import type { RequestHandler } from 'express';

/** Token-bearing responses must not be cached (RFC 6749 §5.1). */
export const noStore: RequestHandler = (_req, res, next) => {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  next();
};
