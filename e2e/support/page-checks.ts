import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { Harness } from './harness';

/** Where screenshots go: docs/screenshots with UPDATE_SCREENSHOTS=1, else a temporary directory. */
export const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? path.resolve(__dirname, '..', '..', 'docs', 'screenshots')
    : fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-screenshots-'));

const AXE = require.resolve('axe-core/axe.min.js');

/** axe-core (WCAG 2.1 A/AA and best practices) finds nothing on the page. */
export async function expectAxeClean(page: Page) {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: object,
          ) => Promise<{ violations: Array<{ id: string; nodes: Array<{ html: string }> }> }>;
        };
      }
    ).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.html).join(' | ')}`);
  });
  expect(violations).toEqual([]);
}

/**
 * A 1280×800 screenshot of the top of the page (autofocus may have scrolled a field into view).
 * `name` may name a subfolder: `shoot(page, 'de/signin')` writes docs/screenshots/de/signin.png.
 */
export async function shoot(page: Page, name: string) {
  await page.evaluate(() => document.fonts.ready);
  await page.evaluate(() => window.scrollTo(0, 0));
  const file = path.join(SCREENSHOTS, `${name}.png`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file });
  const png = fs.readFileSync(file);
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
}

/**
 * Fresh browsers (contexts) for a test file; bypassCSP only so that the test can inject axe-core
 * (the pages' CSP allows no inline script). closeAll() in afterAll.
 */
export function browserContexts(h: () => Harness) {
  const contexts: BrowserContext[] = [];
  return {
    async freshPage(): Promise<Page> {
      const context = await h().browser.newContext({
        viewport: { width: 1280, height: 800 },
        deviceScaleFactor: 1,
        bypassCSP: true,
      });
      contexts.push(context);
      return context.newPage();
    },
    async closeAll() {
      for (const c of contexts) await c.close();
    },
  };
}
