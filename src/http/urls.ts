/** The addresses of the hosted pages, built in one place (routers, pages and redirects share them). */

export const platformQuery = (platformId: string) => `platform_guid=${encodeURIComponent(platformId)}`;

/** The account page and its forms: `/account{suffix}?platform_guid=G`. */
export const accountUrl = (platformId: string, suffix = '') => `/account${suffix}?${platformQuery(platformId)}`;

/** An interaction's page, or one of its forms and links (`/signin`, `/signup`, `/chooser`, `/consent`, `/forgot`). */
export const interactionUrl = (iid: string, suffix = '') => `/interaction/${iid}${suffix}`;

export const forgotPasswordUrl = (platformId: string) => `/password/forgot?${platformQuery(platformId)}`;
