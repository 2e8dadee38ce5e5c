import { Router } from 'express';
import type { Services } from '../../services';
import { listOutbox, readOutboxEntry } from '../../mail/transport';
import { renderPage } from '../pages/render';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
/** The text part with its addresses made clickable (escaped first). */
const linkify = (text: string) =>
  escapeHtml(text).replace(/https?:\/\/[^\s<]+/g, (url) => `<a href="${url}" class="link">${url}</a>`);

/**
 * Development only (never mounted in production): /dev/outbox lists the mails written to
 * DATA_DIR/outbox, newest first, so every mail flow works with no mail server.
 */
export function devOutboxRouter(s: Services): Router {
  const r = Router();
  const dir = s.account.mail.transport.outboxDir;
  r.use('/dev/outbox', (_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  r.get('/dev/outbox', async (req, res) => {
    const to = typeof req.query.to === 'string' ? req.query.to.toLowerCase() : '';
    const mails = dir ? await listOutbox(dir, { to: to || undefined }) : [];
    renderPage(res, 'dev-outbox', { title: 'Outbox', platformName: 'Development outbox', mails, dir: dir ?? null, to });
  });

  r.get('/dev/outbox/:id', async (req, res, next) => {
    const mail = dir && (await readOutboxEntry(dir, req.params.id));
    if (!mail) return next();
    renderPage(res, 'dev-outbox-mail', {
      title: mail.subject,
      platformName: 'Development outbox',
      mail,
      textHtml: linkify(mail.text),
    });
  });

  // The HTML part as sent, sandboxed: no script, no same-origin access.
  r.get('/dev/outbox/:id/html', async (req, res, next) => {
    const mail = dir && (await readOutboxEntry(dir, req.params.id));
    if (!mail) return next();
    res
      .set(
        'Content-Security-Policy',
        "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; sandbox allow-popups allow-top-navigation-by-user-activation",
      )
      .type('html')
      .send(mail.html);
  });
  return r;
}
