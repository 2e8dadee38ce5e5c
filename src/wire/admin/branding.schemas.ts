import { z } from 'zod';
import { accentColorProblem } from '../../domain/branding';

/**
 * Branding fields as the admin surfaces take them: null or "" clears a field. Only
 * refinements (no transforms), so the OpenAPI document shows the input as it is; the services
 * store the normal form ('' → null, the colour in lower case).
 */
const BRANDING_URL_MAX = 2048;

/** localhost, *.localhost, 127.0.0.0/8 and [::1]: a development relying party on the operator's own machine. */
const isLoopbackHost = (hostname: string) =>
  hostname === 'localhost' ||
  hostname.endsWith('.localhost') ||
  hostname === '[::1]' ||
  /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/** Why a URL is refused (https only; `loopbackHttp`: plain http too on a loopback host), or null. */
function brandingUrlProblem(value: string, loopbackHttp: boolean): string | null {
  if (value.length > BRANDING_URL_MAX) return `must be at most ${BRANDING_URL_MAX} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value}" is not an absolute URL`;
  }
  const httpOk = loopbackHttp && url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !httpOk)
    return `"${value}" must be an https URL${loopbackHttp ? ' (http only on a loopback host: localhost, 127.0.0.1, [::1])' : ''}`;
  if (url.username || url.password) return `"${value}" must not carry a user name or password`;
  return null;
}

const refusing = (problem: (v: string) => string | null) => (v: string | null, ctx: z.RefinementCtx) => {
  if (v === null || v.trim() === '') return;
  const message = problem(v.trim());
  if (message) ctx.addIssue({ code: 'custom', message });
};

const emailSchema = z.email();

export const LogoUrl = z
  .string()
  .nullable()
  .superRefine(refusing((v) => brandingUrlProblem(v, false)))
  .meta({
    description: `An https URL the pages load the logo from when none is uploaded (at most ${BRANDING_URL_MAX} characters). null or "" clears it`,
  });

export const AccentColor = z
  .string()
  .nullable()
  .superRefine(refusing((v) => accentColorProblem(v.toLowerCase())))
  .meta({
    description:
      'The accent colour as #rrggbb, at least 4.5:1 against white (white button text, links). null or "" clears it (Latchkey\'s indigo)',
    example: '#0f766e',
  });

export const SupportEmail = z
  .string()
  .nullable()
  .superRefine(
    refusing((v) =>
      v.length > 254 || !emailSchema.safeParse(v).success ? `"${v}" is not a valid email address` : null,
    ),
  )
  .meta({ description: 'Shown in the pages\' footer ("Need help?"). null or "" clears it' });

/** RFC 7591 §2 client metadata: URLs shown on consent; https, or http on a loopback host (development). */
const ClientMetadataUri = (description: string) =>
  z
    .string()
    .nullable()
    .superRefine(refusing((v) => brandingUrlProblem(v, true)))
    .meta({
      description: `${description}. https (http only on a loopback host), at most ${BRANDING_URL_MAX} characters; null or "" clears it`,
    });

export const ClientMetadata = {
  logo_uri: ClientMetadataUri("RFC 7591: the client's logo, shown on the consent page"),
  client_uri: ClientMetadataUri("RFC 7591: the client's home page"),
  policy_uri: ClientMetadataUri("RFC 7591: the client's privacy policy"),
  tos_uri: ClientMetadataUri("RFC 7591: the client's terms of service"),
};

/** '' (or blanks) → null; otherwise trimmed; undefined stays undefined (unchanged). */
export const clearable = (v: string | null | undefined): string | null | undefined =>
  v === undefined ? undefined : v === null || v.trim() === '' ? null : v.trim();
