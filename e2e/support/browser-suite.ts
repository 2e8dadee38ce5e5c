import type { BrowserContext, Page } from 'playwright-core';
import { buildTenant, newPage, startHarness, type Harness, type HarnessOptions, type Tenant } from './harness';

/** What the tests of a browser file share: one provider and tenant for the file, a fresh page per test. */
export interface BrowserSuite {
  h: Harness;
  tenant: Tenant;
  context: BrowserContext;
  page: Page;
}

export interface BrowserSuiteOptions extends HarnessOptions {
  /** The file's tenant; default: buildTenant. */
  tenant?: (h: Harness) => Promise<Tenant>;
  /** Each test's context and page; default: newPage (1280x800). */
  openPage?: (h: Harness) => Promise<{ context: BrowserContext; page: Page }>;
}

/**
 * Registers the hooks every browser test file repeated: the harness and its tenant before all
 * tests (closed after all), a fresh context and page before each (closed after each). `bind`
 * receives the suite whenever it changes, so the file keeps plain `h`, `tenant`, `context`, `page`
 * variables: `useBrowserSuite((s) => ({ h, tenant, context, page } = s))`.
 */
export function useBrowserSuite(bind: (suite: BrowserSuite) => void, options: BrowserSuiteOptions = {}): void {
  const { tenant: makeTenant = buildTenant, openPage = newPage, ...harnessOptions } = options;
  const suite = {} as BrowserSuite;
  beforeAll(async () => {
    suite.h = await startHarness(harnessOptions);
    suite.tenant = await makeTenant(suite.h);
    bind(suite);
  });
  afterAll(() => suite.h?.close());
  beforeEach(async () => {
    Object.assign(suite, await openPage(suite.h));
    bind(suite);
  });
  afterEach(() => suite.context?.close());
}
