// Finds the Chromium (or Chrome) the browser tests drive. The browser tests FAIL, never skip,
// when none is found: the message below says how to install one.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Executable names tried on PATH, in order (Debian, Ubuntu, Google Chrome). */
export const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Chromium binaries downloaded by `npx playwright install chromium`, newest first. */
function playwrightBrowsers(env: NodeJS.ProcessEnv): string[] {
  const root = env['PLAYWRIGHT_BROWSERS_PATH'] ?? join(homedir(), '.cache', 'ms-playwright');
  try {
    return readdirSync(root)
      .filter((name) => name.startsWith('chromium-'))
      .sort()
      .reverse()
      .flatMap((name) => [join(root, name, 'chrome-linux', 'chrome'), join(root, name, 'chrome-linux64', 'chrome')]);
  } catch {
    return [];
  }
}

/**
 * The browser to drive: CHROMIUM_PATH when set (and only it), else the first of
 * CHROMIUM_NAMES on PATH, else a Playwright download. Undefined when there is none.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const chosen = env['CHROMIUM_PATH'];
  if (chosen) return executable(chosen) ? chosen : undefined;
  const folders = (env['PATH'] ?? '').split(delimiter).filter((folder) => folder !== '');
  for (const name of CHROMIUM_NAMES) {
    for (const folder of folders) {
      const candidate = join(folder, name);
      if (executable(candidate)) return candidate;
    }
  }
  return playwrightBrowsers(env).find(executable);
}

/** Why the browser tests cannot run, and how to fix it. */
export function chromiumMissing(env: NodeJS.ProcessEnv = process.env): string {
  const where = env['CHROMIUM_PATH'] ? `CHROMIUM_PATH=${env['CHROMIUM_PATH']} is not an executable` : `none of ${CHROMIUM_NAMES.join(', ')} is on PATH and there is no Playwright download`;
  return `The browser tests need Chromium, and ${where}. Install it: \`sudo apt-get install -y chromium\` (Debian; Ubuntu: chromium-browser), or \`npx playwright install chromium\`, or set CHROMIUM_PATH to a Chromium or Chrome binary. See "Prerequisites" in README.md.`;
}

/** The browser the tests launch (Debian's path when none is found, so a launch fails loudly). */
export const CHROMIUM = findChromium() ?? '/usr/bin/chromium';

/** Launches Chromium with exactly the flags CI uses and attaches over the DevTools protocol. */
export async function launchChromium(userDataDir: string): Promise<{ browser: Browser; process: ChildProcess }> {
  const child = spawn(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${userDataDir}`,
      '--remote-debugging-port=0',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const endpoint = await new Promise<string>((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`Chromium did not start within 30 s:\n${stderr}`)), 30_000);
    child.once('error', (error) => reject(new Error(`Cannot run ${CHROMIUM}: ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`Chromium exited with ${code}:\n${stderr}`)));
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
  });
  child.removeAllListeners('exit');
  return { browser: await chromium.connectOverCDP(endpoint), process: child };
}


/** A Chromium the test started (launchChromium, in a profile of its own) and how to end it. */
export interface RunningChromium {
  browser: Browser;
  /** Ends Chromium (Browser.close, SIGKILL after 5 s) and removes its profile folder. */
  close(): Promise<void>;
}

/**
 * Fails the test with chromiumMissing()'s message when there is no Chromium, else launches one
 * in a temporary profile: the browser tests' one way to start and end it.
 */
export async function startChromium(): Promise<RunningChromium> {
  expect(findChromium(), chromiumMissing()).toBeDefined();
  const userDataDir = mkdtempSync(join(tmpdir(), 'crosstab-chromium-'));
  // Chromium's helper processes may still be letting go of the profile for a moment.
  const removeProfile = () => rmSync(userDataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  let launched: Awaited<ReturnType<typeof launchChromium>>;
  try {
    launched = await launchChromium(userDataDir);
  } catch (error) {
    removeProfile();
    throw error;
  }
  const { browser, process: child } = launched;
  return {
    browser,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        // Close the browser itself (closing a CDP connection only detaches), then wait for it.
        await browser
          .newBrowserCDPSession()
          .then((session) => session.send('Browser.close'))
          .catch(() => {});
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
      }
      removeProfile();
    },
  };
}

/** A started Chromium with one page open. */
export interface ChromiumPage extends RunningChromium {
  page: Page;
}

/** startChromium with a new page of its default context, sized `viewport`. */
export async function startChromiumPage(viewport: { width: number; height: number }): Promise<ChromiumPage> {
  const running = await startChromium();
  try {
    const page = await running.browser.contexts()[0]!.newPage();
    await page.setViewportSize(viewport);
    return { ...running, page };
  } catch (error) {
    await running.close();
    throw error;
  }
}
