import type { Response } from 'express';
import type { Services } from '../../services';
import type { UpstreamFailure } from '../../domain/upstream';
import { allowFormRedirectTo } from '../middleware/security-headers';
import { renderPage } from './render';

/** A "Continue with …" button: its label and the form's action. */
export interface UpstreamButton {
  label: string;
  action: string;
}

/**
 * The enabled upstream providers of the platform as buttons (views/partials/upstream-buttons.ejs).
 * The form answers 303 to the upstream, so the page's CSP form-action also allows each upstream's
 * origin (browsers apply form-action to the redirects of a form's navigation).
 */
export async function upstreamButtons(
  s: Services,
  res: Response,
  platformId: string,
  actionFor: (slug: string) => string,
): Promise<UpstreamButton[]> {
  const providers = await s.federation.providers.enabledFor(platformId);
  for (const p of providers) allowFormRedirectTo(res, p.issuer);
  return providers.map((p) => ({
    label: res.locals.t('upstream:continueWith', { provider: p.displayName }),
    action: actionFor(p.slug),
  }));
}

/** Why an upstream sign-in failed, one sentence each (locales/<lng>/upstream.json `reasons`). */
type FailureReason = UpstreamFailure | 'expired' | 'unknown_provider';

/**
 * "Couldn't sign in with {provider}": why, in one sentence, and the way back to the
 * sign-in page with the other ways in. 502 when the upstream could not be reached, else 400.
 */
export function renderUpstreamFailure(
  res: Response,
  f: { providerName: string | null; reason: FailureReason; signinUrl: string | null },
): void {
  const t = res.locals.t;
  const provider = f.providerName ?? t('upstream:failed.yourProvider');
  renderPage(
    res,
    'upstream-failed',
    {
      title: f.providerName
        ? t('upstream:failed.title', { provider: f.providerName })
        : t('upstream:failed.titleNoProvider'),
      // Sentences that start with the name: "your provider" is capitalised there.
      message: capitalise(t(`upstream:reasons.${f.reason}`, { provider })),
      signinUrl: f.signinUrl,
    },
    f.reason === 'unreachable' ? 502 : 400,
  );
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
