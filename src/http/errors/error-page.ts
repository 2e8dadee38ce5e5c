import type { Express, Request, Response } from 'express';
import type { OAuthError } from '../../errors';
import { translatorFor } from '../../i18n/catalogs';
import { localeOfRequest, useLocale } from '../middleware/locale';
import { renderPage } from '../pages/render';

/** The catalog key of the page message of errors that always read the same (or error.pageMessage). */
function pageMessageOf(error: OAuthError): string | undefined {
  if (error.pageMessage) return error.pageMessage;
  if (error.code === 'too_many_requests') return 'errors:page.tooManyRequests';
  if (error.code === 'temporarily_unavailable') return 'errors:page.unavailable';
  if (error.code === 'not_found') return 'errors:notFound.message';
  if (error.status >= 500) return 'errors:message.server';
  return undefined;
}

/** The English description as a detail, for whoever debugs the app: unless it says only what the message says. */
function showsDetail(error: OAuthError, key: string | undefined, seconds: number): boolean {
  if (error.status >= 500 || error.code === 'not_found') return false; // generic texts, or the path the page already names
  return !key || translatorFor('en')(key, { count: seconds }) !== error.description;
}

/** Only an http(s) URL may become the "Back to …" link (a javascript: URL would run on click). */
const isWebUrl = (url: string) => /^https?:\/\//i.test(url);

/**
 * The HTML error page: heading, message, hint and buttons in the page's language; the English
 * description as a detail when no translated message fits; the request id for the operator.
 */
export function renderErrorPage(req: Request, res: Response, error: OAuthError): void {
  if (!res.locals.t) useLocale(res, localeOfRequest(req)); // an error before the locale middleware (a rate limit)
  const t = res.locals.t;
  const key = pageMessageOf(error);
  const seconds = Number(error.headers['Retry-After']) || 1;
  const app = error.app && isWebUrl(error.app.url) ? error.app : undefined;
  const notFound = error.code === 'not_found';
  const heading = notFound
    ? t('errors:notFound.heading')
    : error.status >= 500
      ? t('errors:heading.server')
      : t('errors:heading.request');
  renderPage(
    res,
    'error',
    {
      title: heading,
      heading,
      message: key ? t(key, { count: seconds }) : t('errors:message.request'),
      detail: showsDetail(error, key, seconds) ? error.description : null,
      status: error.status,
      requestId: req.id ? String(req.id) : null,
      back: app
        ? { href: app.url, label: t('errors:backToApp', { app: app.name }) }
        : { href: '/', label: t('errors:home') },
    },
    error.status,
  );
}

/**
 * The error page for a request node:http refused before there was one (client-error.ts): in
 * English with Latchkey's own brand (app.locals, set in createApp), the description as its detail.
 */
export function renderRequestlessErrorPage(
  app: Express,
  status: number,
  description: string,
  done: (err: Error | null, html?: string) => void,
): void {
  const t = app.locals.t as (key: string) => string;
  const heading = t('errors:heading.request');
  app.render(
    'error',
    {
      title: heading,
      heading,
      message: t('errors:message.request'),
      detail: description,
      status,
      requestId: null,
      back: { href: '/', label: t('errors:home') },
    },
    done,
  );
}
