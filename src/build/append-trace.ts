/**
 * CROSSTAB_TRACE=1 (any value but empty or 0): appendRows(), buildDataset() and weightDataset() write a line per phase to stderr:
 * the milliseconds since the process started when the phase ended, the phase's wall time and
 * the process's CPU time in it (every thread's: user + system), and the parts of the write
 * that are summed over buffers (reading the old bytes, checking and making hashes, making the
 * new buffers). For profiling; nothing is measured when it is unset.
 */
export interface AppendTrace {
  /** Ends the phase running since the last mark, named `phase`. */
  mark(phase: string, detail?: string): void;
  /** Adds `ms` to the summed part `part` (printed by done()). */
  add(part: string, ms: number): void;
  /** Prints the summed parts and the whole. */
  done(): void;
}

/** `whole`: what the last line (the whole, from the call) is named. */
export function appendTrace(env: NodeJS.ProcessEnv = process.env, whole = 'appendRows'): AppendTrace | undefined {
  const setting = env['CROSSTAB_TRACE'];
  if (setting === undefined || setting === '' || setting === '0') return undefined;
  const cpuMs = () => {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1000;
  };
  const started = { wall: performance.now(), cpu: cpuMs() };
  // The first phase, the process's start to here: Node's own and the modules it loaded.
  let last = { wall: 0, cpu: 0 };
  const parts = new Map<string, number>();
  const line = (what: string, wall: number, cpu: number, detail?: string) =>
    process.stderr.write(`trace: ${performance.now().toFixed(0).padStart(5)} ms  ${what.padEnd(26)} ${wall.toFixed(1).padStart(7)} ms wall ${cpu.toFixed(1).padStart(7)} ms CPU${detail === undefined ? '' : `  ${detail}`}\n`);
  return {
    mark(phase, detail) {
      const now = { wall: performance.now(), cpu: cpuMs() };
      line(phase, now.wall - last.wall, now.cpu - last.cpu, detail);
      last = now;
    },
    add(part, ms) {
      parts.set(part, (parts.get(part) ?? 0) + ms);
    },
    done() {
      for (const [part, ms] of parts) process.stderr.write(`trace:          of which ${part.padEnd(17)} ${ms.toFixed(1).padStart(7)} ms (main thread, summed over buffers)\n`);
      const now = { wall: performance.now(), cpu: cpuMs() };
      line(`${whole} in all`, now.wall - started.wall, now.cpu - started.cpu, `process CPU since start ${cpuMs().toFixed(0)} ms`);
    },
  };
}
