/**
 * Branding: a platform's logo, accent colour and support email, and the client
 * metadata consent shows (RFC 7591 §2: logo_uri, client_uri, policy_uri, tos_uri).
 */
export interface PlatformBranding {
  /** An https URL the pages load the logo from (used when no logo is uploaded). */
  logoUrl: string | null;
  /** The uploaded logo's content hash, or null when none is uploaded. */
  logoVersion: string | null;
  /** `#rrggbb`; null: Latchkey's indigo. */
  accentColor: string | null;
  supportEmail: string | null;
}

export interface ClientBranding {
  logoUri: string | null;
  clientUri: string | null;
  policyUri: string | null;
  tosUri: string | null;
}

export const NO_CLIENT_BRANDING: ClientBranding = { logoUri: null, clientUri: null, policyUri: null, tosUri: null };

/** The path an uploaded logo is served from; the version makes every new upload a new URL. */
export const uploadedLogoPath = (platformId: string, version: string): string =>
  `/platforms/${platformId}/logo?v=${version}`;

/** The logo the pages show: the uploaded one, else the https URL, else none (the initial). */
export const platformLogoSrc = (platformId: string, b: PlatformBranding): string | null =>
  b.logoVersion ? uploadedLogoPath(platformId, b.logoVersion) : b.logoUrl;

/** Logo uploads: raster images and SVG (served with a CSP that runs nothing), at most 256 KiB. */
export const LOGO_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/svg+xml'] as const;
export const LOGO_MAX_BYTES = 256 * 1024;

export const HEX_COLOR = /^#[0-9a-f]{6}$/;

/** WCAG 2.1 AA for normal text: the accent carries white button text and is the colour of links. */
const MIN_ACCENT_CONTRAST = 4.5;

type Rgb = [number, number, number];
const rgbOf = (hex: string): Rgb => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as Rgb;
const hexOf = (rgb: Rgb): string => `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;

/** WCAG 2.1 relative luminance. */
function luminance([r, g, b]: Rgb): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** WCAG 2.1 contrast ratio of two `#rrggbb` colours (1 to 21). */
function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(rgbOf(a)), luminance(rgbOf(b))].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

const mix = (a: Rgb, b: Rgb, weight: number): Rgb => a.map((c, i) => c + (b[i] - c) * weight) as Rgb;

/** Why an accent colour is refused, or null when it is usable (lower case `#rrggbb`, ≥ 4.5:1 on white). */
export function accentColorProblem(value: string): string | null {
  if (!HEX_COLOR.test(value)) return 'must be a colour as #rrggbb';
  const ratio = contrastRatio(value, '#ffffff');
  if (ratio < MIN_ACCENT_CONTRAST)
    return `has a contrast of ${ratio.toFixed(2)}:1 against white; white text on it and links in it need at least ${MIN_ACCENT_CONTRAST}:1 (pick a darker shade)`;
  return null;
}

/** The page surfaces the accent is checked against: white (light) and the dark theme's card. */
const DARK_SURFACE = '#1f2937';

/**
 * The CSS custom properties for an accent colour, in light and dark. Light uses the colour as it
 * is (checked ≥ 4.5:1 on white); dark lightens it towards white until links in it read ≥ 4.5:1 on
 * the dark card, and button text turns dark when white no longer reads on it.
 */
export function accentPalette(accent: string): { light: Record<string, string>; dark: Record<string, string> } {
  const base = rgbOf(accent);
  const white: Rgb = [255, 255, 255];
  const black: Rgb = [0, 0, 0];
  let dark = base;
  for (let w = 0; w <= 1 && contrastRatio(hexOf(dark), DARK_SURFACE) < MIN_ACCENT_CONTRAST; w += 0.05)
    dark = mix(base, white, w);
  const darkHex = hexOf(dark);
  return {
    light: {
      '--brand': accent,
      '--brand-hover': hexOf(mix(base, black, 0.15)),
      '--brand-soft': hexOf(mix(base, white, 0.92)),
      '--brand-strong': hexOf(mix(base, black, 0.35)),
      '--on-brand': '#ffffff',
    },
    dark: {
      '--brand': darkHex,
      '--brand-hover': hexOf(mix(dark, white, 0.15)),
      '--brand-soft': hexOf(mix(base, rgbOf(DARK_SURFACE), 0.8)),
      '--brand-strong': hexOf(mix(dark, white, 0.6)),
      '--on-brand': contrastRatio(darkHex, '#ffffff') >= MIN_ACCENT_CONTRAST ? '#ffffff' : '#111827',
    },
  };
}
