import type { Response } from 'express';
import { presentPageBrand } from '../../presenters/branding.presenter';
import { DEFAULT_LOCALE } from '../../domain/locales';
import { translatorFor } from '../../i18n/catalogs';

/** The templates under views/ that are whole pages. */
export type PageName =
  | 'signin'
  | 'signup'
  | 'chooser'
  | 'consent'
  | 'account'
  | 'account-choose'
  | 'signed-out'
  | 'notice'
  | 'error'
  | 'forgot-password'
  | 'reset-password'
  | 'logout-confirm'
  | (string & {}); // pages added by other features (views/*.ejs)

/**
 * Renders a hosted page: `Cache-Control: no-store` (pages carry forms, CSRF tokens and personal
 * data) and the model every page shares — the platform's name and branding, the
 * language and its translator `t`, the CSRF token — under the page's own model.
 */
export function renderPage(res: Response, page: PageName, model: Record<string, unknown>, status = 200): void {
  const locale = res.locals.locale ?? DEFAULT_LOCALE;
  res
    .status(status)
    .set('Cache-Control', 'no-store')
    .set('Content-Language', locale)
    .render(page, {
      platformName: res.locals.platform?.name ?? null,
      brand: presentPageBrand(res.locals.platform),
      lang: locale,
      t: res.locals.t ?? translatorFor(locale),
      csrfToken: res.locals.csrfToken,
      ...model,
    });
}
