/** The addresses of the hosted pages, built in one place (routers, pages and redirects share them). */

export const platformQuery = (platformId: string) => `platform_guid=${encodeURIComponent(platformId)}`;

/** The account page and its forms: `/account{suffix}?platform_guid=G`. */
export const accountUrl = (platformId: string, suffix = '') => `/account${suffix}?${platformQuery(platformId)}`;

/** An interaction's page, or one of its forms and links (`/signin`, `/signup`, `/chooser`, `/consent`, `/forgot`). */
export const interactionUrl = (iid: string, suffix = '') => `/interaction/${iid}${suffix}`;

export const forgotPasswordUrl = (platformId: string) => `/password/forgot?${platformQuery(platformId)}`;

/** The redirect_uri registered at every upstream provider of a platform (DESIGN §17): one fixed path per platform. */
export { upstreamCallbackUrl } from '../domain/upstream'; // the one definition: presenters and the console show the same URL

/** The account page's sign-in through an upstream provider. */
export const accountUpstreamUrl = (platformId: string, slug: string) => `/account/upstream/${encodeURIComponent(slug)}?${platformQuery(platformId)}`;

/** "Email me a link" of the link page: the mailed link back to this browser's interaction (DESIGN §17). */
export const linkAccountMailUrl = (iid: string, token: string) => `/interaction/${iid}/link-account/email?token=${encodeURIComponent(token)}`;
