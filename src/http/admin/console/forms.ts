import type { Request, Response } from 'express';
import { OAuthError } from '../../../errors';
import { flash } from './operator';
import { saveConsoleSession } from './session';

/** What a console form's change answers: a message for the next page, and where to go (303). */
export interface FormDone {
  message: string;
  to: string;
}

/**
 * A console form POST: run the change; on success leave `message` for the next page and answer
 * 303 to `to` (Post/Redirect/Get: a reload does not post again). An expected mistake (an OAuthError
 * below 500: bad input, unknown id) re-renders the page with the error and its status; never a 5xx.
 */
export async function submitForm(
  req: Request,
  res: Response,
  run: () => Promise<FormDone>,
  show: (error: string, status: number) => Promise<void>,
): Promise<void> {
  let done: FormDone;
  try {
    done = await run();
  } catch (err) {
    if (err instanceof OAuthError && err.status < 500) return show(err.description, err.status);
    throw err;
  }
  flash(req, done.message);
  await saveConsoleSession(req);
  res.redirect(303, done.to);
}

/** A form field as one trimmed string ('' when absent or repeated). */
export function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** A query parameter as one trimmed string ('' when absent or repeated). */
export function queryParam(req: Request, name: string): string {
  const value = req.query[name];
  return typeof value === 'string' ? value.trim() : '';
}
