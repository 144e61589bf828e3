// How the browser tests find Chromium (test/support/chromium.ts): on PATH under its Debian,
// Ubuntu or Chrome name, or where CHROMIUM_PATH says; when missing, a message saying how to
// install it. The browser tests themselves fail, not skip, without it.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './http/support.js';
import { chromiumMissing, findChromium } from './support/chromium.js';

function folderWith(name: string): string {
  const folder = join(tempDir('chromium-lookup-'), 'bin');
  mkdirSync(folder);
  const file = join(folder, name);
  writeFileSync(file, '#!/bin/sh\n');
  chmodSync(file, 0o755);
  return folder;
}

describe('findChromium', () => {
  it.each(['chromium', 'chromium-browser', 'google-chrome'])('finds %s on PATH', (name) => {
    const folder = folderWith(name);
    const empty = tempDir('chromium-empty-');
    expect(findChromium({ PATH: `/nonexistent:${folder}`, PLAYWRIGHT_BROWSERS_PATH: empty })).toBe(join(folder, name));
  });

  it('uses CHROMIUM_PATH alone when it is set', () => {
    const folder = folderWith('chromium');
    expect(findChromium({ PATH: folder, CHROMIUM_PATH: '/nonexistent/chrome' })).toBeUndefined();
    expect(findChromium({ PATH: '', CHROMIUM_PATH: join(folder, 'chromium') })).toBe(join(folder, 'chromium'));
  });

  it('says how to install it when there is none', () => {
    const empty = tempDir('chromium-empty-');
    expect(findChromium({ PATH: empty, PLAYWRIGHT_BROWSERS_PATH: empty })).toBeUndefined();
    expect(chromiumMissing({ PATH: empty })).toMatch(/apt-get install -y chromium/);
    expect(chromiumMissing({ CHROMIUM_PATH: '/x/chrome' })).toMatch(/CHROMIUM_PATH=\/x\/chrome is not an executable/);
  });
});
