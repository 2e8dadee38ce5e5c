import { createHash } from 'node:crypto';
import { LOGO_CONTENT_TYPES, LOGO_MAX_BYTES } from '../domain/branding';
import { invalidRequest } from '../errors';
import type { Queryable } from '../db';
import { isUuid } from '../domain/ids';
import * as logos from '../repositories/platform-logo.repository';
import { sniffImageType } from './account/profile.service';

export type LogoContentType = (typeof LOGO_CONTENT_TYPES)[number];

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * The tokens of an XML document, each where the last one ended: a comment, CDATA, a processing
 * instruction (the XML declaration), a start/end/empty tag with quoted attributes, or text.
 */
const TOKEN =
  /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[^\s=/>"'<]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>|[^<]+/g;

/**
 * Why the bytes are not an SVG document, or null: UTF-8 text, well-formed tags, one root element
 * `svg` in the SVG namespace, no DOCTYPE (no entities to expand). Scripts inside are harmless: the
 * logo is served with a CSP that runs nothing (sandbox), and shown through <img>.
 */
function svgProblem(bytes: Buffer): string | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    return 'is not UTF-8 text';
  }
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) return 'must not have a DOCTYPE or entities';
  const open: string[] = [];
  let root: string | undefined;
  let rootAttrs = '';
  let closed = false;
  // One pass of a global regex (much faster than one sticky exec per token); a gap between two matches is a '<' that starts no token.
  let at = 0;
  for (const m of text.matchAll(TOKEN)) {
    if (m.index !== at) return `is not well-formed XML (at character ${at})`;
    at = m.index + m[0].length;
    const [token, slash, name, attrs, selfClosing] = m;
    if (name === undefined) {
      // Text and CDATA belong inside the root; comments and processing instructions may sit around it.
      const isMarkup = token.startsWith('<!--') || token.startsWith('<?');
      if (!isMarkup && open.length === 0 && token.trim() !== '') return 'has content outside its root element';
      continue;
    }
    if (slash) {
      if (open.pop() !== name) return `is not well-formed XML (</${name}> closes nothing open)`;
      if (open.length === 0) closed = true;
      continue;
    }
    if (open.length === 0) {
      if (root !== undefined) return 'has more than one root element';
      root = name;
      rootAttrs = attrs ?? '';
    }
    if (!selfClosing) open.push(name);
    else if (open.length === 0) closed = true;
  }
  if (at !== text.length) return `is not well-formed XML (at character ${at})`;
  if (root === undefined) return 'has no root element';
  if (root !== 'svg') return `has the root element <${root}>, not <svg>`;
  if (!closed || open.length) return 'is not well-formed XML (an element is not closed)';
  if (!new RegExp(`\\sxmlns\\s*=\\s*["']${SVG_NS.replace(/[./]/g, '\\$&')}["']`).test(rootAttrs))
    return `must declare xmlns="${SVG_NS}" on <svg>`;
  return null;
}

/** The media type without parameters, in lower case ('' when absent). */
const bareContentType = (value: string | undefined | null) => (value ?? '').split(';')[0].trim().toLowerCase();

const isLogoType = (t: string): t is LogoContentType => (LOGO_CONTENT_TYPES as readonly string[]).includes(t);

/**
 * The checked upload: at most LOGO_MAX_BYTES, one of LOGO_CONTENT_TYPES by its own bytes (raster
 * formats by their signature, SVG by parsing), and, when the sender named a type, that type.
 * Throws invalid_request with the reason.
 */
export function checkLogo(bytes: Buffer, declared?: string): { contentType: LogoContentType; version: string } {
  const named = bareContentType(declared);
  if (named && !isLogoType(named))
    throw invalidRequest(`the logo must be one of ${LOGO_CONTENT_TYPES.join(', ')} (got ${named})`);
  if (bytes.length === 0) throw invalidRequest('the logo is empty');
  if (bytes.length > LOGO_MAX_BYTES)
    throw invalidRequest(`the logo is ${bytes.length} bytes; at most ${LOGO_MAX_BYTES} (${LOGO_MAX_BYTES / 1024} KiB)`);
  const raster = sniffImageType(bytes);
  let contentType: LogoContentType;
  if (raster && isLogoType(raster)) contentType = raster;
  else {
    const problem = svgProblem(bytes);
    if (problem) {
      const why =
        named === 'image/svg+xml'
          ? `the SVG ${problem}`
          : `the logo is none of ${LOGO_CONTENT_TYPES.join(', ')} by its content`;
      throw invalidRequest(why);
    }
    contentType = 'image/svg+xml';
  }
  if (named && named !== contentType)
    throw invalidRequest(`the logo is ${contentType} by its content, not the ${named} it was sent as`);
  return { contentType, version: createHash('sha256').update(bytes).digest('base64url').slice(0, 16) };
}

/** The uploaded logo of a platform (public: the pages load it), or undefined for none or a malformed id. */
export const findUploadedLogo = (db: Queryable, platformId: string) =>
  isUuid(platformId) ? logos.find(db, platformId) : Promise.resolve(undefined);
