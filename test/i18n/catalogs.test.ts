// Every text of the pages and mails is in locales/<language>/<namespace>.json, and
// English, German, French and Spanish are complete. These checks fail on a key missing in any
// catalog, on a key the code uses that English does not have, and on a translation that drops or
// renames a placeholder.
import fs from 'node:fs';
import path from 'node:path';
import { LOCALES_DIR, readCatalogs, translatorFor } from '../../src/i18n/catalogs';
import { SUPPORTED_LOCALES } from '../../src/domain/locales';

const ROOT = path.resolve(__dirname, '..', '..');
const catalogs = readCatalogs();
const PLURAL = /_(zero|one|two|few|many|other)$/;

/** Every leaf of a catalog as `namespace:a.b.c` → text. */
function leaves(ns: string, node: unknown, prefix = ''): Array<[string, unknown]> {
  if (node && typeof node === 'object' && !Array.isArray(node)) {
    return Object.entries(node).flatMap(([k, v]) => leaves(ns, v, prefix ? `${prefix}.${k}` : k));
  }
  return [[`${ns}:${prefix}`, node]];
}
const keysOf = (lng: string) => new Map(Object.entries(catalogs[lng]).flatMap(([ns, c]) => leaves(ns, c)));
/** Plural forms differ per language (French and Spanish have "many"): compared by their base key. */
const baseKeys = (lng: string) => new Set([...keysOf(lng).keys()].map((k) => k.replace(PLURAL, '')));
const placeholders = (text: unknown) => [...String(text).matchAll(/\{\{\s*([\w.]+)[^}]*\}\}/g)].map((m) => m[1]).sort();

function filesUnder(dir: string, ext: RegExp): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(p, ext) : ext.test(e.name) ? [p] : [];
  });
}

const english = keysOf('en');
const namespaces = Object.keys(catalogs.en);

it('every language has the same catalog files as English', () => {
  for (const lng of SUPPORTED_LOCALES)
    expect(fs.readdirSync(path.join(LOCALES_DIR, lng)).sort()).toEqual(
      fs.readdirSync(path.join(LOCALES_DIR, 'en')).sort(),
    );
});

it.each(SUPPORTED_LOCALES.filter((l) => l !== 'en'))('%s has every English key, no other, and no empty text', (lng) => {
  const missing = [...baseKeys('en')].filter((k) => !baseKeys(lng).has(k));
  const extra = [...baseKeys(lng)].filter((k) => !baseKeys('en').has(k));
  expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  const empty = [...keysOf(lng)].filter(([, v]) => typeof v !== 'string' || v.trim() === '').map(([k]) => k);
  expect(empty).toEqual([]);
});

it.each(SUPPORTED_LOCALES.filter((l) => l !== 'en'))('%s keeps every placeholder of the English text', (lng) => {
  const theirs = keysOf(lng);
  const wrong = [...english].flatMap(([key, text]) => {
    const base = key.replace(PLURAL, '');
    const forms = [...theirs].filter(([k]) => k.replace(PLURAL, '') === base);
    // A plural form may leave out {{count}} ("one" in words); every other placeholder stays.
    return forms
      .filter(
        ([, t]) =>
          placeholders(t)
            .filter((p) => p !== 'count')
            .join() !==
          placeholders(text)
            .filter((p) => p !== 'count')
            .join(),
      )
      .map(([k]) => k);
  });
  expect([...new Set(wrong)]).toEqual([]);
});

it('every plural key has its "one" and "other" form in every language', () => {
  for (const lng of SUPPORTED_LOCALES) {
    const keys = keysOf(lng);
    const bases = [...keys.keys()].filter((k) => PLURAL.test(k)).map((k) => k.replace(PLURAL, ''));
    const incomplete = bases.filter((b) => !keys.has(`${b}_one`) || !keys.has(`${b}_other`));
    expect({ lng, incomplete }).toEqual({ lng, incomplete: [] });
  }
});

it('every key the code and the views name exists in English', () => {
  // A key is any quoted "namespace:key" with a namespace of ours (a view's t('…'), a service's message key).
  const pattern = new RegExp(`['"\`](${namespaces.join('|')}):([A-Za-z0-9_.-]+)['"\`]`, 'g');
  const files = [...filesUnder(path.join(ROOT, 'src'), /\.ts$/), ...filesUnder(path.join(ROOT, 'views'), /\.ejs$/)];
  const unknown = files.flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(pattern)]
      .map((m) => `${m[1]}:${m[2]}`)
      // The attempt throttle's row kinds ('signin:account', 'mfa:account') are database keys that share a namespace's name.
      .filter(
        (key) =>
          !(
            path.basename(file) === 'attempt-throttle.service.ts' && /^(signin|signup|mfa):(account|source)$/.test(key)
          ),
      )
      .filter((key) => !english.has(key) && !english.has(`${key}_one`) && !key.endsWith('.'))
      .map((key) => `${path.relative(ROOT, file)}: ${key}`),
  );
  expect(unknown).toEqual([]);
});

it('translates with the fixed translator of each language, falling back to English for none', () => {
  expect(translatorFor('en')('common:securedBy')).toBe('Secured by');
  expect(translatorFor('de')('common:securedBy')).toBe('Geschützt durch');
  expect(translatorFor('fr')('common:skipToContent')).toBe('Aller au contenu');
  expect(translatorFor('es')('common:skipToContent')).toBe('Saltar al contenido');
});
