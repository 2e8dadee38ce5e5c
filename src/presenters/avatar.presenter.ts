import { createHash } from 'node:crypto';

/**
 * Generated avatars: a 128x128 SVG with the user's initials in white on a
 * background colour derived deterministically from a seed (e.g. the user id).
 * The background uses a fixed saturation/lightness chosen so that white text
 * keeps a contrast ratio of at least 4.5:1 for every hue.
 */

export interface AvatarInput {
  seed: string;
  initials: string;
}

const SIZE = 128;
const SATURATION = 55; // percent
const LIGHTNESS = 30; // percent — white text ≥ 4.7:1 contrast at every hue

function escapeXml(value: string): string {
  return value.replace(/[<>&"']/g, (ch) => {
    switch (ch) {
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '&':
        return '&amp;';
      case '"':
        return '&quot;';
      default:
        return '&apos;';
    }
  });
}

/** Hue in [0, 360) derived from a SHA-256 of the seed (stable across processes). */
function hueOf(seed: string): number {
  const digest = createHash('sha256').update(seed, 'utf8').digest();
  return digest.readUInt16BE(0) % 360;
}

/** Background colour as an HSL string for a given seed. */
function avatarColour(seed: string): string {
  return `hsl(${hueOf(seed)}, ${SATURATION}%, ${LIGHTNESS}%)`;
}

/** Keeps at most two user-perceived characters, upper-cased; '?' when empty. */
function normaliseInitials(initials: string): string {
  const chars = Array.from(stripControl(initials).replace(/\s+/g, ''));
  const kept = chars.slice(0, 2).join('').toLocaleUpperCase('en');
  return kept.length > 0 ? kept : '?';
}

function stripControl(value: string): string {
  // Remove C0/C1 control characters, which are not allowed in XML 1.0 text.
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
}

function firstLetter(value: string | null | undefined): string {
  if (!value) return '';
  const trimmed = stripControl(value).trim();
  const first = Array.from(trimmed).find((ch) => /[\p{L}\p{N}]/u.test(ch));
  return first ?? '';
}

/**
 * Initials for an avatar:
 *  - given + family name → first letter of each ("Ada", "Lovelace" → "AL")
 *  - only one of them → its first letter
 *  - neither → first letter of the email's local part
 *  - nothing usable → "?"
 */
export function initialsOf(givenName?: string | null, familyName?: string | null, email?: string): string {
  const g = firstLetter(givenName);
  const f = firstLetter(familyName);
  let result = g + f;
  if (!result && email) {
    const local = email.split('@')[0] ?? '';
    result = firstLetter(local);
  }
  return result ? result.toLocaleUpperCase('en') : '?';
}

export function renderAvatarSvg(input: AvatarInput): string {
  const initials = normaliseInitials(input.initials);
  const text = escapeXml(initials);
  const fill = avatarColour(input.seed);
  const fontSize = Array.from(initials).length > 1 ? 52 : 60;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" ` +
    `viewBox="0 0 ${SIZE} ${SIZE}">` +
    `<rect width="${SIZE}" height="${SIZE}" rx="${SIZE / 2}" ry="${SIZE / 2}" fill="${fill}"/>` +
    `<text x="50%" y="50%" dy=".35em" text-anchor="middle" fill="#ffffff" ` +
    `font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif" ` +
    `font-size="${fontSize}" font-weight="600">${text}</text>` +
    `</svg>`
  );
}
