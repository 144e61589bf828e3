// Finds the Chromium (or Chrome) the browser tests drive. The browser tests FAIL, never skip,
// when none is found: the message below says how to install one.
import { accessSync, constants, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

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
