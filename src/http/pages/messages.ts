import type { Translate } from '../../i18n/catalogs';

/** A catalog key as the services return it for a page's message ('mfa:errors.wrongCode'). */
const CATALOG_KEY = /^[a-z][\w-]*:[\w.-]+$/;

/**
 * A service's message for a page, in the page's language: a catalog key is translated (with the
 * page's own values for its placeholders); any other text is shown as it is (a message not yet
 * moved to the catalogs), never looked up, since i18next would read a colon in it as a namespace.
 */
export function translateMessage(
  t: Translate,
  message: string | null | undefined,
  params: Record<string, unknown> = {},
): string | null {
  if (!message) return null;
  return CATALOG_KEY.test(message) ? String(t(message, params)) : message;
}
