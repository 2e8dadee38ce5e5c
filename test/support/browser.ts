import request from 'supertest';
import type { Express } from 'express';

/** A cookie-keeping HTTP "browser" over the hosted pages, for protocol tests without Chromium. */
export function browser(app: Express) {
  const agent = request.agent(app);
  let lastHtml = '';

  const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const restartOf = (html: string) => /name="restart" value="([^"]+)"/.exec(html)?.[1];
  const unescape = (s: string) =>
    s.replace(/&amp;/g, '&').replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

  /** Follows same-origin redirects; stops at the first page or at a redirect off-site. */
  async function follow(res: request.Response): Promise<{ res: request.Response; location?: string }> {
    let current = res;
    for (let i = 0; i < 10 && current.status >= 300 && current.status < 400; i++) {
      const location = current.headers.location as string;
      if (!location.startsWith('/')) return { res: current, location };
      current = await agent.get(location);
    }
    if (current.type === 'text/html') lastHtml = current.text;
    return { res: current };
  }

  return {
    agent,
    get html() {
      return lastHtml;
    },
    async get(path: string) {
      return follow(await agent.get(path));
    },
    /** Submits the current page's form (by action suffix) with the given fields. */
    async submit(actionSuffix: string, fields: Record<string, string>) {
      const action = [...lastHtml.matchAll(/<form[^>]*action="([^"]+)"/g)]
        .map((m) => unescape(m[1]))
        .find((a) => a.endsWith(actionSuffix));
      if (!action) throw new Error(`no form ending in ${actionSuffix} on the page:\n${lastHtml.slice(0, 3000)}`);
      const restart = restartOf(lastHtml);
      const body = { _csrf: csrfOf(lastHtml), ...(restart ? { restart: unescape(restart) } : {}), ...fields };
      return follow(await agent.post(action).type('form').send(body));
    },
    pageTitle() {
      return /<h1[^>]*>([\s\S]*?)<\/h1>/
        .exec(lastHtml)?.[1]
        .replace(/<[^>]+>/g, '')
        .trim();
    },
  };
}

export type Browser = ReturnType<typeof browser>;
