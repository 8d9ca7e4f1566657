// The web console in a real Chromium (Debian's chromium driven by playwright-core) against the real reference
// server on 127.0.0.1: sign in, watch a real image build (the README's example: Debian 13 Minimal with nginx,
// applied through the engine as `apply` does, so the warm OS layer cache is hit) to completion with its progress
// moving, find nginx in its SBOM through the search form, download it and compare its sha256 with sha256sum's,
// cancel a second build through the confirmation page, sign out; a second user sees none of it; a template named
// <script>alert(1)</script> is shown as text and no dialog opens.
// Skipped, with the reason printed, where Chromium cannot start or the build cannot run (not root).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/client';
import { applyDeclaration, loadDeclaration } from '../../src/engine';
import { examplesWorkspace } from '../engine/helpers/service';
import { originOf, PASSWORDS, startConsoleServer, type ConsoleServer } from './helpers';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'];
const XSS = '<script>alert(1)</script>';

/** Why the browser tests cannot run here, or undefined when they can. */
function cannotRun(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: the real image build needs root (or subordinate ids set up by scripts/prereqs.sh)';
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (bash scripts/prereqs.sh test installs Debian's chromium)`;
  try {
    execFileSync(CHROMIUM, ['--headless', ...ARGS, '--dump-dom', 'about:blank'], { stdio: 'pipe', timeout: 60_000 });
  } catch (e) {
    return `${CHROMIUM} does not start: ${String((e as { stderr?: Buffer }).stderr ?? e).trim().split('\n').slice(-2).join(' ')}`;
  }
  return undefined;
}

const skip = cannotRun();
if (skip) console.warn(`SKIP the console's browser tests: ${skip}`);

/** Polls `fn` until it answers something other than undefined (bounded). */
async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number, everyMs = 1000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

describe.skipIf(skip !== undefined)('the web console in Chromium', () => {
  let ref: ConsoleServer;
  let origin: string;
  let alice: Client;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  let applying: Promise<unknown>;
  let imagePath = '';

  beforeAll(async () => {
    ref = await startConsoleServer();
    origin = originOf(ref);
    alice = ref.client(ref.users.alice, { retry: false });
    await alice.appliance_create({ uid: 'alice', body: { name: XSS, version: '1.0', distributionUri: 'distributions/1' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    context = await browser.newContext({ acceptDownloads: true });
    page = await context.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const dir = examplesWorkspace('af-console-');
    const { declaration } = loadDeclaration(path.join(dir, 'local.yml'));
    // The build the console watches: started as `apply` does, awaited at the end of the watch.
    applying = applyDeclaration(declaration, { client: alice, publish: false }).then(
      (r) => r,
      (e: unknown) => ({ failed: e }),
    );
  }, 300_000);
  afterAll(async () => {
    await applying?.catch(() => undefined);
    await browser?.close();
    await ref?.close();
  });

  it('signs in through the form and lands on the images page', async () => {
    await page.goto(`${origin}/console`);
    expect(page.url()).toBe(`${origin}/console/sign-in`);
    // The keyboard's first stop is the skip link, which leads to the main region.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('main');
    await page.getByLabel('Login').fill('alice');
    await page.getByLabel('Password').fill(PASSWORDS.alice);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${origin}/console/images`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Images and builds');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'forge_console')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    // The script cannot read the session cookie.
    expect(await page.evaluate<string>('document.cookie')).not.toContain('forge_console');
  });

  it('shows the template named <script>alert(1)</script> as text, and no dialog opens', async () => {
    await page.goto(`${origin}/console/appliances`);
    await expect(page.getByRole('link', { name: XSS }).count()).resolves.toBe(1);
    const scripts = await page.evaluate<Array<string | null>>("[...document.querySelectorAll('script')].map((s) => s.getAttribute('src'))");
    expect(scripts).toHaveLength(1);
    expect(scripts[0]).toMatch(/^\/console\/assets\/console\.[0-9a-f]+\.js$/);
    await page.getByRole('link', { name: XSS }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(`Appliance ${XSS} 1.0`);
    expect(dialogs).toEqual([]);
  });

  it('watches a real image build to completion, its progress moving in the page', async () => {
    // The image appears in the list once apply has generated it; the list shows its progress too.
    const seen: number[] = [];
    imagePath = await waitFor(
      'the image in the list',
      async () => {
        await page.goto(`${origin}/console/images`);
        const row = page.locator('tr[data-job]').first();
        const href = await row.locator('a').getAttribute('href', { timeout: 500 });
        seen.push(Number(await row.locator('progress').getAttribute('value', { timeout: 500 })));
        return href ?? undefined;
      },
      600_000,
      250,
    );
    await page.goto(origin + imagePath);
    // The page's script moves the progress bar (and reloads the page when the build ends): sample it.
    const t0 = Date.now();
    const words = await waitFor(
      'the build to end',
      async () => {
        const v = await page.evaluate<{ p: number; w: string }>("({ p: document.querySelector('progress')?.value ?? -1, w: document.querySelector('[data-words]')?.textContent ?? '' })");
        if (seen[seen.length - 1] !== v.p) seen.push(v.p);
        return v.w === 'complete' || v.w.startsWith('failed') || v.w === 'cancelled' ? v.w : undefined;
      },
      1_500_000,
      500,
    );
    console.log(`console build watch: ${((Date.now() - t0) / 1000).toFixed(0)} s, progress values seen ${seen.join(' → ')}`);
    expect(words).toBe('complete');
    expect(new Set(seen).size).toBeGreaterThanOrEqual(2);
    expect(seen[seen.length - 1]).toBe(100);
    const applied = (await applying) as { failed?: unknown };
    expect(applied.failed).toBeUndefined();
    await expect(page.locator('#sha256').textContent()).resolves.toMatch(/^[0-9a-f]{64}$/);
  }, 1_800_000);

  it('shows the built appliance with its OS, its packages, its software bundle and its image', async () => {
    const aid = imagePath.split('/')[3]!;
    await page.goto(`${origin}/console/appliances/${aid}`);
    const main = (await page.locator('main').textContent())!;
    expect(main).toContain('example-web');
    expect(main).toMatch(/Debian/);
    const pkgs = await page.locator('td[data-label="Package"]').allTextContents();
    expect(pkgs).toEqual(expect.arrayContaining(['nginx', 'curl']));
    await page.getByRole('link', { name: /^example-site/ }).click();
    await expect(page.locator('main').textContent()).resolves.toContain('index.html');
  });

  it('finds nginx in the SBOM through the search form, with a license summary beside it', async () => {
    await page.goto(origin + imagePath);
    await page.getByLabel(/Search the packages/).fill('nginx');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\?q=nginx$/);
    const names = await page.locator('#packages tbody td[data-label="Package"]').allTextContents();
    expect(names).toContain('nginx');
    await expect(page.getByText(/^\d+ of \d+ packages match "nginx"\.$/).count()).resolves.toBe(1);
    await expect(page.getByRole('heading', { name: 'Licenses' }).count()).resolves.toBe(1);
    expect(await page.locator('table').first().locator('tbody tr').count()).toBeGreaterThan(0);
  });

  it('downloads the image, whose sha256 (by sha256sum) is the one the page shows', async () => {
    await page.goto(origin + imagePath);
    const shown = (await page.locator('#sha256').textContent())!;
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 600_000 }), page.getByRole('link', { name: /^Download / }).click()]);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'af-console-dl-')), download.suggestedFilename());
    await download.saveAs(file);
    const sum = execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0];
    expect(sum).toBe(shown);
  }, 900_000);

  it('cancels a second build through the confirmation page', async () => {
    const aid = Number(imagePath.split('/')[3]);
    const second = await alice.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'Raw Virtual Disk' } } });
    const path2 = `/console/appliances/${aid}/images/${second.dbId}`;
    await page.goto(origin + path2);
    await page.getByRole('link', { name: 'Cancel the build' }).click();
    await page.waitForURL(`${origin}${path2}/cancel`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Cancel the build?');
    await page.getByRole('button', { name: 'Cancel the build' }).click();
    await page.waitForURL(origin + path2);
    await expect(page.locator('[data-words]').textContent()).resolves.toBe('cancelled');
    const status = await alice.machineImageStatus_get({ uid: 'alice', aid, itid: second.dbId! });
    expect(status.cancelled).toBe(true);
  });

  it('shows a second user none of it', async () => {
    // On a phone's screen: nothing wider than the screen.
    const other = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      const p = await other.newPage();
      await p.goto(`${origin}/console/sign-in`);
      await p.getByLabel('Login').fill('bob');
      await p.getByLabel('Password').fill(PASSWORDS.bob);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p.waitForURL(`${origin}/console/images`);
      await expect(p.locator('main').textContent()).resolves.toContain('No images yet');
      expect(await p.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await p.goto(`${origin}/console/appliances`);
      await expect(p.locator('main').textContent()).resolves.toContain('No appliances yet');
      const r = await p.goto(origin + imagePath);
      expect(r?.status()).toBe(404);
      await expect(p.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Not found');
      const dl = await p.request.get(`${origin}${imagePath}/download`);
      expect(dl.status()).toBe(404);
    } finally {
      await other.close();
    }
  });

  it('fits the image page and its package table on a phone’s screen', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, storageState: await context.storageState() });
    try {
      const p = await phone.newPage();
      for (const url of [`${origin}/console/images`, `${origin}${imagePath}`]) {
        await p.goto(url);
        expect(await p.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth'), url).toBe(true);
      }
    } finally {
      await phone.close();
    }
  });

  it('signs out, after which the console asks for a password again', async () => {
    await page.goto(`${origin}/console/images`);
    await page.getByRole('button', { name: 'Sign out alice' }).click();
    await page.waitForURL(`${origin}/console/sign-in`);
    await page.goto(`${origin}/console/images`);
    expect(page.url()).toBe(`${origin}/console/sign-in`);
    expect(dialogs).toEqual([]);
  });
});
