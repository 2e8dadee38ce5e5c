import type { RequestHandler } from 'express';
import { z } from 'zod';
import { invalidRequest } from '../../errors';
import { parseOAuth } from './params';

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`).optional();

/**
 * Every field the hosted authorization forms post (sign-in, sign-up, chooser, consent), bounded.
 * The handlers read the fields themselves; this only refuses what no form of ours can send.
 */
export const HostedForm = z
  .object({
    _csrf: text(256),
    restart: text(16_384), // the original authorize query, bounded by the body limit anyway
    email: text(320),
    password: text(1024),
    given_name: text(200),
    family_name: text(200),
    birthdate: text(32),
    phone_number: text(1024), // longer than the field's maxlength: a field error from the sign-up rules (user-rules.ts)
    decision: text(16),
    account: text(64),
    signout: text(64),
    signout_all: text(16),
    another: text(16),
    code: text(64), // a TOTP or recovery code (second-factor page, authenticator setup)
    method: text(32),
    credential: text(16_384), // a passkey's answer, JSON (public/passkeys.js)
    user_code: text(64), // the device page (RFC 8628): 8 letters, a dash, spaces people type
  })
  .passthrough();

/**
 * Hosted form POSTs: a form body (browsers send nothing else for our forms), every field once,
 * within its bounds; otherwise invalid_request, which the error middleware renders as a page.
 */
export const hostedFormBody: RequestHandler = (req, _res, next) => {
  if (!req.is('application/x-www-form-urlencoded'))
    throw invalidRequest('The form must be sent as application/x-www-form-urlencoded');
  parseOAuth(HostedForm, req.body);
  next();
};
