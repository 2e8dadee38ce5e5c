import { accentPalette, HEX_COLOR, platformLogoSrc } from '../domain/branding';
import type { Platform } from '../domain/platform';

/** What the page header, footer and theme show of a platform; no platform: Latchkey. */
export interface PageBrand {
  name: string;
  /** The letter shown when there is no logo. */
  initial: string;
  logoSrc: string | null;
  supportEmail: string | null;
  /** `:root{…}` rules for the accent colour, light and dark; null: the stylesheet's indigo. */
  accentCss: string | null;
}

const rules = (vars: Record<string, string>) =>
  Object.entries(vars)
    .map(([k, v]) => `${k}:${v}`)
    .join(';');

export function presentPageBrand(platform: Platform | undefined | null): PageBrand {
  const name = platform?.name?.trim() || 'Latchkey';
  const b = platform?.branding;
  // The colour is re-checked here: it goes into a <style> element, so nothing but #rrggbb may pass.
  const accent = b?.accentColor && HEX_COLOR.test(b.accentColor) ? accentPalette(b.accentColor) : null;
  return {
    name,
    initial: name.charAt(0).toUpperCase(),
    logoSrc: platform && b ? platformLogoSrc(platform.id, b) : null,
    supportEmail: b?.supportEmail ?? null,
    accentCss:
      accent && `:root{${rules(accent.light)}}@media (prefers-color-scheme: dark){:root{${rules(accent.dark)}}}`,
  };
}
