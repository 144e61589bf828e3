// Debian's Chromium driven over the DevTools protocol by playwright-core, with exactly the
// flags CI uses. Chromium is required (CI installs it: apt-get install -y chromium).
import { spawn, type ChildProcess } from 'node:child_process';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

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

