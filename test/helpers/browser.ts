// Headless Chromium from Debian (/usr/bin/chromium) driven by playwright-core: no browser download, no GPU,
// no background network. playwright gives every launch a fresh temporary profile (its own user data dir).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { projectRoot } from '../../src/base/paths.js';

export const CHROMIUM = process.env.SIGHTFLOW_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = join(projectRoot, 'test-artifacts', 'console');

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

export function chromiumMissing(): string | false {
  return existsSync(CHROMIUM)
    ? false
    : `${CHROMIUM} not found (apt-get install chromium; scripts/setup.d/40-console.sh does it)`;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true, timeout: 60_000 });
}

/** Full-page screenshot under test-artifacts/console/<name>.png (git-ignored), for people to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Polls until `read()` satisfies `ok` (the page updates asynchronously). */
export async function eventually<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: T = await read();
  while (!ok(last)) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
    last = await read();
  }
  return last;
}

/**
 * Collects what a page must never show into `problems`: Content-Security-Policy violations and uncaught
 * exceptions. HTTP errors the tests cause on purpose are logged by Chromium too, so other console lines are
 * not collected.
 */
export function recordPageProblems(page: Page, problems: string[]): void {
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
}
