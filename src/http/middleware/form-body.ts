import type { RequestHandler } from 'express';
import { invalidRequest } from '../../errors';

/** Spec: POST bodies are application/x-www-form-urlencoded; anything else is invalid_request. */
export const requireFormBody: RequestHandler = (req, _res, next) => {
  if (!req.is('application/x-www-form-urlencoded')) {
    throw invalidRequest('The request body must be application/x-www-form-urlencoded');
  }
  next();
};
