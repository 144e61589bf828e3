// Datasets built once per test run and shared by every file of the run that asks for the same
// one: in the global setup's folder (made and removed by test/global-setup.ts), so they last
// exactly one run. The first process to ask builds under a temporary name and renames, so no
// file ever opens half a dataset; a process that asks meanwhile waits for that rename instead
// of building the same thing again beside it (the builder's process id is in a lock file; the
// lock of a process that no longer runs is taken over). A build that fails lets the next
// asker build, so its error is seen there too.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, watch, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { inject } from 'vitest';

const root = inject('testDatasets').dir;
const built = new Map<string, Promise<string>>();

/**
 * The path of `group/<hash of key><extension>` in the run's folder, made by `build(path)` the
 * first time any file of the run asks for `key`. `build` writes the file (or folder) it is given and
 * nothing else; whoever opens the result must not change it (other files read it).
 */
export function sharedBuild(group: string, key: string, build: (out: string) => Promise<unknown>, extension = '.arrow'): Promise<string> {
  const out = join(root, group, `${createHash('sha256').update(key).digest('hex').slice(0, 24)}${extension}`);
  let path = built.get(out);
  if (!path) {
    path = buildOrWait(out, extension, build);
    built.set(out, path);
  }
  return path;
}

async function buildOrWait(out: string, extension: string, build: (out: string) => Promise<unknown>): Promise<string> {
  mkdirSync(dirname(out), { recursive: true });
  const stem = out.slice(0, out.length - extension.length);
  const lock = `${stem}.lock`;
  for (;;) {
    if (existsSync(out)) return out;
    if (takeLock(lock)) {
      const partial = `${stem}.${process.pid}.partial${extension}`;
      try {
        if (!existsSync(out)) {
          await build(partial);
          renameSync(partial, out);
        }
        return out;
      } finally {
        rmSync(partial, { recursive: true, force: true });
        rmSync(lock, { force: true });
      }
    }
    await builtOrAbandoned(out, lock);
  }
}

/** Makes the lock file with this process's id; false when another running process holds it. */
function takeLock(lock: string): boolean {
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (holderRunning(lock)) return false;
  rmSync(lock, { force: true });
  return takeLock(lock);
}

/** False when the lock is gone or its process no longer runs (a lock being written counts as held). */
function holderRunning(lock: string): boolean {
  let holder: number;
  try {
    holder = Number(readFileSync(lock, 'utf8'));
  } catch {
    return false;
  }
  if (!Number.isInteger(holder) || holder <= 0) return true;
  try {
    process.kill(holder, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolves when `out` appears (the folder's rename event) or the lock is let go or abandoned. */
function builtOrAbandoned(out: string, lock: string): Promise<void> {
  return new Promise((resolve) => {
    const settled = () => existsSync(out) || !holderRunning(lock);
    const done = () => {
      watcher.close();
      clearInterval(holderCheck);
      resolve();
    };
    const watcher = watch(dirname(out), () => settled() && done());
    // A holder killed mid-build leaves its lock behind without an event: look at it now and then.
    const holderCheck = setInterval(() => settled() && done(), 2000);
    if (settled()) done();
  });
}
