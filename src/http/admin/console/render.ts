import type { Request, Response } from 'express';
import type { SigningProfile } from '../../../domain/platform';
import { withFieldLabels } from './field-labels';

/** One entry of the console's navigation (src/http/admin/console/screens.ts). */
export interface ConsoleNavEntry {
  label: string;
  /** `global`: in the top bar; `platform`: in a platform's tabs, under /admin/platforms/:id. */
  section: 'global' | 'platform';
  /** The screen's path below /admin (global) or below /admin/platforms/:id (platform). */
  path: string;
}

declare global {
  namespace Express {
    interface Locals {
      consoleNav?: ConsoleNavEntry[];
      /** The platform a platform screen is about (loaded and scope-checked by screens.ts). */
      consolePlatform?: { id: string; name: string; signingProfile: SigningProfile };
    }
  }
}

interface NavLink {
  label: string;
  href: string;
  current: boolean;
}

function links(entries: ConsoleNavEntry[], base: string, path: string): NavLink[] {
  return entries.map((e) => {
    const href = `${base}${e.path}`;
    return { label: e.label, href, current: path === href || path.startsWith(`${href}/`) };
  });
}

/**
 * Renders a console page (views/admin/*.ejs) in the console frame: `no-store`, the CSRF token, the
 * operator, the navigation (with the current entry marked) and a flash message left by the last
 * form, under the page's own model. An `error` names fields by their labels on the form, not by
 * the API's names (field-labels.ts).
 */
export function renderConsole(
  req: Request,
  res: Response,
  view: string,
  model: Record<string, unknown>,
  status = 200,
): void {
  const entries = res.locals.consoleNav ?? [];
  const platform = res.locals.consolePlatform;
  const path = `${req.baseUrl}${req.path}`.replace(/\/$/, '');
  const flash = req.session?.console?.flash;
  if (flash) delete req.session.console!.flash;
  const platformBase = platform ? `/admin/platforms/${platform.id}` : '';
  res
    .status(status)
    .set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' })
    .render(`admin/${view}`, {
      csrfToken: res.locals.csrfToken,
      operator: res.locals.operator ?? null,
      platform: platform ?? null,
      globalNav: links(
        entries.filter((e) => e.section === 'global'),
        '/admin',
        path,
      ),
      platformNav: platform
        ? links(
            entries.filter((e) => e.section === 'platform'),
            platformBase,
            path,
          )
        : [],
      flash: flash ?? null,
      ...model,
      error: typeof model.error === 'string' ? withFieldLabels(model.error, view) : null,
    });
}
