/** The languages of the hosted pages and mails; English is the fallback. */
export const SUPPORTED_LOCALES = ['en', 'de', 'fr', 'es'] as const;
export type Locale = (typeof SUPPORTED_LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export const isLocale = (v: unknown): v is Locale =>
  typeof v === 'string' && (SUPPORTED_LOCALES as readonly string[]).includes(v);

/** A BCP 47 tag's language ("de-CH" → "de") when we speak it. */
function supported(tag: string): Locale | undefined {
  const language = tag.trim().toLowerCase().split(/[-_]/)[0];
  return isLocale(language) ? language : undefined;
}

/**
 * OIDC Core 3.1.2.1 `ui_locales`: space-separated tags in order of preference; the first we speak
 * wins. Undefined when none is (the caller falls back to Accept-Language).
 */
export function localeOfUiLocales(uiLocales: string | undefined): Locale | undefined {
  for (const tag of (uiLocales ?? '').split(' ')) {
    const hit = tag && supported(tag);
    if (hit) return hit;
  }
  return undefined;
}

/** The first of the tags we speak; used for a tag Express matched, which may carry a region. */
export const localeOfTag = (tag: string | false | undefined): Locale | undefined => (tag ? supported(tag) : undefined);
