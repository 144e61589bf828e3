// A file's share in the page cache, and a read of it before a timed run. A machine may page
// out files left idle (a VM's memory reclaim moves cold pages out after a minute or so), so a
// run that reads its input from disk and one that finds it in memory are not comparable: a
// bench reads every input once just before each timed run and says how much of it was cached.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Bytes of `path` in the page cache and its size, from fincore (util-linux), or undefined
 * where fincore is not installed or cannot tell.
 */
export function pageCacheResidency(path) {
  try {
    const out = execFileSync('fincore', ['--bytes', '--noheadings', '--output', 'RES,SIZE', path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const [resident, size] = out.trim().split(/\s+/).map(Number);
    return Number.isFinite(resident) && Number.isFinite(size) ? { residentBytes: resident, bytes: size } : undefined;
  } catch {
    return undefined;
  }
}

/** Reads `path` once from start to end (into a reused buffer): its pages are then cached, as far as memory allows. */
export function readThrough(path) {
  const buffer = Buffer.allocUnsafe(16 << 20);
  const fd = openSync(path, 'r');
  try {
    let position = 0;
    for (let read; (read = readSync(fd, buffer, 0, buffer.length, position)) > 0; ) position += read;
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads `path` through (readThrough) and returns its residency before and after that read,
 * as the bench records it before a timed run: `{ before, after }`, each a residency or 'unknown'.
 */
export function warmInput(path) {
  const before = pageCacheResidency(path) ?? 'unknown';
  readThrough(path);
  return { before, after: pageCacheResidency(path) ?? 'unknown' };
}

/** A residency as text: `100% of 861 MB` or `unknown`. */
export function residencyText(residency) {
  if (residency === 'unknown') return 'unknown';
  const share = residency.bytes === 0 ? 1 : residency.residentBytes / residency.bytes;
  return `${(share * 100).toFixed(0)}% of ${(residency.bytes / 1e6).toFixed(0)} MB`;
}
