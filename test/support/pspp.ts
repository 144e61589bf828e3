// Debian's pspp writes the SPSS files some tests read. CI installs it, and under CI=true a
// missing pspp fails those tests; elsewhere they are skipped, loudly.
import { execFileSync } from 'node:child_process';

/** Whether `pspp` runs here. */
export const hasPspp = (() => {
  try {
    execFileSync('pspp', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** True when `what` is to be skipped (no pspp, not CI), saying so on the console. */
export function skipWithoutPspp(what: string): boolean {
  const skip = !hasPspp && process.env.CI !== 'true';
  if (skip) console.warn(`\n*** SKIPPED: ${what} needs Debian's pspp (apt-get install pspp); CI installs it. ***\n`);
  return skip;
}
