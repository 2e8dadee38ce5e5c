/** The addresses of the hosted pages, built in one place (routers, pages and redirects share them). */

export const platformQuery = (platformId: string) => `platform_guid=${encodeURIComponent(platformId)}`;

/** The account page and its forms: `/account{suffix}?platform_guid=G`. */
export const accountUrl = (platformId: string, suffix = '') => `/account${suffix}?${platformQuery(platformId)}`;

/** The account page's tabs (docs/decisions.md, "Page usability findings"): server-rendered links, so they work without JavaScript. */
export const ACCOUNT_SECTIONS = ['profile', 'security', 'apps'] as const;
export type AccountSection = (typeof ACCOUNT_SECTIONS)[number];
export const isAccountSection = (v: unknown): v is AccountSection =>
  typeof v === 'string' && (ACCOUNT_SECTIONS as readonly string[]).includes(v);

/** The account page at one tab (`/account?platform_guid=G&section=security`); the profile tab has no `section`. */
export const accountSectionUrl = (platformId: string, section: AccountSection = 'profile') =>
  section === 'profile' ? accountUrl(platformId) : `${accountUrl(platformId)}&section=${section}`;

/**
 * A tab asked for before the sign-in (or the choice of account), carried by the sign-in pages'
 * URLs so the sign-in ends there (a signed-out browser has no session to keep it in).
 */
export const requestedSection = (query: unknown): Exclude<AccountSection, 'profile'> | undefined => {
  const section = (query as Record<string, unknown> | undefined)?.section;
  return isAccountSection(section) && section !== 'profile' ? section : undefined;
};

/** `url` (which has a query) with the tab asked for, if any. */
export const withSection = (url: string, section: AccountSection | undefined) =>
  section && section !== 'profile' ? `${url}&section=${section}` : url;

/** An interaction's page, or one of its forms and links (`/signin`, `/signup`, `/chooser`, `/consent`, `/forgot`). */
export const interactionUrl = (iid: string, suffix = '') => `/interaction/${iid}${suffix}`;

export const forgotPasswordUrl = (platformId: string) => `/password/forgot?${platformQuery(platformId)}`;

/** The redirect_uri registered at every upstream provider of a platform: one fixed path per platform. */
export { upstreamCallbackUrl } from '../domain/upstream'; // the one definition: presenters and the console show the same URL

/** The account page's sign-in through an upstream provider. */
export const accountUpstreamUrl = (platformId: string, slug: string) =>
  `/account/upstream/${encodeURIComponent(slug)}?${platformQuery(platformId)}`;

/** "Email me a link" of the link page: the mailed link back to this browser's interaction. */
export const linkAccountMailUrl = (iid: string, token: string) =>
  `/interaction/${iid}/link-account/email?token=${encodeURIComponent(token)}`;
