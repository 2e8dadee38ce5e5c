import type { Request, RequestHandler, Response } from 'express';
import { SUPPORTED_LOCALES, DEFAULT_LOCALE, localeOfTag, localeOfUiLocales, type Locale } from '../../domain/locales';
import { translatorFor, type Translate } from '../../i18n/catalogs';

declare global {
  namespace Express {
    interface Locals {
      /** The page's language and its translator; views read both through renderPage. */
      locale: Locale;
      t: Translate;
    }
  }
}

/** Sets the response's language; `ui_locales` of an authorization request overrides Accept-Language. */
export function useLocale(res: Response, locale: Locale): void {
  res.locals.locale = locale;
  res.locals.t = translatorFor(locale);
}

/** The language Accept-Language prefers among ours, else English. */
export const localeOfRequest = (req: Request): Locale =>
  localeOfTag(req.acceptsLanguages(...SUPPORTED_LOCALES)) ?? DEFAULT_LOCALE;

/** Every browser request: the language from Accept-Language (RFC 9110 §12.5.4), English when none fits. */
export const localeFromRequest: RequestHandler = (req, res, next) => {
  useLocale(res, localeOfRequest(req));
  next();
};

/** An authorization's pages: its `ui_locales` (OIDC Core 3.1.2.1) first, then Accept-Language. */
export function useUiLocales(req: Request, res: Response, uiLocales: string | undefined): void {
  useLocale(res, localeOfUiLocales(uiLocales) ?? localeOfRequest(req));
}
