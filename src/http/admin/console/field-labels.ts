/**
 * The admin services answer bad input with the API's field names ("accent_color: has a contrast
 * of …"), which suit the API and the CLI. On a console page each is named by the label of its
 * field on the form instead (the console is English, inline in its views, like the rest of it).
 */
const LABELS: Record<string, string> = {
  // Platforms, Keys, Rate limits, Branding
  name: 'Name',
  signing_profile: 'Signing profile',
  registration: 'Dynamic registration',
  client_metadata_documents: 'Client ID metadata documents',
  alg: 'Algorithm',
  per_minute: 'Requests per minute',
  logo_url: 'Logo URL',
  accent_color: 'Accent colour',
  support_email: 'Support email',
  // Clients
  type: 'Type',
  redirect_uris: 'Redirect URIs',
  post_logout_redirect_uris: 'Post-logout redirect URIs',
  scopes: 'Scopes',
  is_resource_server: 'Resource server',
  id_token_signed_response_alg: 'ID-token algorithm',
  backchannel_logout_uri: 'Back-channel logout URI',
  backchannel_logout_session_required: 'Logout tokens must carry sid',
  frontchannel_logout_uri: 'Front-channel logout URI',
  frontchannel_logout_session_required: 'Add iss and sid to the front-channel URI',
  logo_uri: 'Logo URL',
  client_uri: 'Home page',
  policy_uri: 'Privacy policy',
  tos_uri: 'Terms of service',
  overlap_seconds: 'Previous secret keeps working',
  // Upstream providers
  kind: 'Kind',
  display_name: 'Display name',
  slug: 'Slug',
  issuer: 'Issuer',
  tenant: 'Microsoft tenant',
  api_base_url: 'GitHub API base URL',
  client_id: 'Client id',
  client_secret: 'Client secret',
  claim_mapping: 'Claim mapping',
  trust_email: 'Email verified by the upstream',
  trust_mfa: 'Trust its two-step verification',
  store_tokens: 'Keep the upstream\u2019s tokens',
  enabled: 'Enabled',
  // Resources (name and scopes as above)
  uri: 'Resource URI',
  default_scopes: 'Default scopes',
  access_token_ttl_seconds: 'Access-token lifetime',
  // Registration tokens
  max_uses: 'Maximum uses',
  expires_in: 'Expires in',
  // Users, Mail, Audit log filters
  email: 'Email',
  status: 'Status',
  platform: 'Platform',
  subject: 'Subject (sub)',
  since: 'Since',
  until: 'Until',
  cursor: 'Page link',
};

/** Where a screen's form labels a field otherwise (views/admin/<view>.ejs). */
const VIEW_LABELS: Record<string, Record<string, string>> = {
  users: { email: 'Email contains' },
  keys: { signing_profile: 'Profile' },
  'upstream-provider': { client_secret: 'New client secret' },
};

/** Lists typed one per line on the forms: an index is a line there. */
const ONE_PER_LINE = new Set(['redirect_uris', 'post_logout_redirect_uris', 'claim_mapping']);

/** One "field.path: message" at the start of each "; "-separated part, as parseInput and the services write them. */
const FIELD_PREFIX = /(^|; )([a-z][a-z0-9_]*)((?:\.[A-Za-z0-9_]+)*): /g;

/**
 * `message` with each leading API field name replaced by the field's label on `view`'s form:
 * "accent_color: has a contrast …" → "Accent colour: has a contrast …"; "redirect_uris.1: …" →
 * "Redirect URIs (line 2): …". A name no form shows is left as it is.
 */
export function withFieldLabels(message: string, view: string): string {
  return message.replace(FIELD_PREFIX, (whole, lead: string, name: string, path: string) => {
    const label = VIEW_LABELS[view]?.[name] ?? LABELS[name];
    if (!label) return whole;
    const first = path.split('.')[1];
    if (first === undefined) return `${lead}${label}: `;
    const where = /^\d+$/.test(first) ? `${ONE_PER_LINE.has(name) ? 'line' : 'entry'} ${Number(first) + 1}` : first;
    return `${lead}${label} (${where}): `;
  });
}
