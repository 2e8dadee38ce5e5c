import type { Response } from 'express';
import { renderPage } from './render';
import { translateMessage } from './messages';

/** The device page's address (RFC 8628 §3.2 verification_uri), the same for every platform. */
export const DEVICE_PAGE_PATH = '/device';

/**
 * BASE_URL/device: one field for the user code, focused on load, pre-filled from
 * verification_uri_complete (RFC 8628 §3.3.1: the person still confirms it matches the device).
 * `error` is a catalog key (device:errors.…); `count` its minutes for a lock.
 */
export function renderDeviceForm(
  res: Response,
  model: { value: string; error?: string | null; errorValues?: Record<string, string | number> },
  status = 200,
): void {
  const t = res.locals.t;
  renderPage(
    res,
    'device',
    {
      title: t('device:title'),
      action: DEVICE_PAGE_PATH,
      value: model.value,
      error: translateMessage(t, model.error, model.errorValues),
    },
    status,
  );
}

/** How the person's visit ended: approved, denied, or too late / already answered. */
export type DeviceOutcome = 'approved' | 'denied' | 'expired' | 'used';

/** The last page: "return to your device", or why there is nothing to return to. */
export function renderDeviceOutcome(res: Response, clientName: string, outcome: DeviceOutcome): void {
  const t = res.locals.t;
  const app = { app: clientName };
  const pages = {
    approved: { icon: 'ok', heading: t('device:done.approvedTitle'), message: t('device:done.approved', app) },
    denied: { icon: 'info', heading: t('device:done.deniedTitle'), message: t('device:done.denied', app) },
    expired: { icon: 'error', heading: t('device:done.expiredTitle'), message: t('device:done.expired') },
    used: { icon: 'error', heading: t('device:done.usedTitle'), message: t('device:done.used') },
  } as const;
  const page = pages[outcome];
  renderPage(res, 'notice', {
    title: page.heading,
    ...page,
    details: outcome === 'approved' ? t('device:done.returnToDevice') : t('device:done.closePage'),
  });
}
