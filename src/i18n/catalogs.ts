import fs from 'node:fs';
import path from 'node:path';
import i18next, { type TFunction } from 'i18next';
import { DEFAULT_LOCALE, SUPPORTED_LOCALES, type Locale } from '../domain/locales';

/** locales/<language>/<namespace>.json: one file per page area, the same files in every language. */
export const LOCALES_DIR = path.resolve(__dirname, '..', '..', 'locales');

export type Catalog = Record<string, unknown>;

/** Reads every catalog once, at start (a few dozen small files; pages never wait on disk). */
export function readCatalogs(dir = LOCALES_DIR): Record<string, Record<string, Catalog>> {
  const out: Record<string, Record<string, Catalog>> = {};
  for (const lng of SUPPORTED_LOCALES) {
    out[lng] = {};
    for (const file of fs
      .readdirSync(path.join(dir, lng))
      .filter((f) => f.endsWith('.json'))
      .sort()) {
      out[lng][file.slice(0, -'.json'.length)] = JSON.parse(
        fs.readFileSync(path.join(dir, lng, file), 'utf8'),
      ) as Catalog;
    }
  }
  return out;
}

const resources = readCatalogs();
const i18n = i18next.createInstance();
void i18n.init({
  resources,
  lng: DEFAULT_LOCALE,
  fallbackLng: DEFAULT_LOCALE,
  supportedLngs: [...SUPPORTED_LOCALES],
  ns: Object.keys(resources[DEFAULT_LOCALE]),
  defaultNS: 'common',
  initAsync: false, // resources are in memory: ready before the first request
  // EJS escapes on output (<%= %>); escaping here too would show &amp; on the page.
  interpolation: { escapeValue: false },
  returnNull: false,
  showSupportNotice: false,
} as Parameters<typeof i18n.init>[0]);

/** `t` for one language: `t('signin:title')`, `t('mail:reset.subject', { platform })`. */
export type Translate = TFunction;
const translators = new Map<Locale, Translate>(SUPPORTED_LOCALES.map((l) => [l, i18n.getFixedT(l)]));
export const translatorFor = (locale: Locale): Translate => translators.get(locale)!;
