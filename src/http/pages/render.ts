import type { Response } from 'express';

/** The templates under views/ that are whole pages. */
export type PageName =
  | 'signin' | 'signup' | 'chooser' | 'consent'
  | 'account' | 'account-choose' | 'signed-out' | 'notice' | 'error'
  | 'forgot-password' | 'reset-password' | 'logout-confirm'
  | (string & {}); // pages added by other features (views/*.ejs)

/**
 * Renders a hosted page: `Cache-Control: no-store` (pages carry forms, CSRF tokens and personal
 * data; issue 10 §6) and the model every page shares — the platform's name and the CSRF token —
 * under the page's own model.
 */
export function renderPage(res: Response, page: PageName, model: Record<string, unknown>, status = 200): void {
  res.status(status).set('Cache-Control', 'no-store').render(page, {
    platformName: res.locals.platform?.name ?? null,
    csrfToken: res.locals.csrfToken,
    ...model,
  });
}
