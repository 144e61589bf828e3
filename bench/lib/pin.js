// CPU pinning for benchmarks that run servers and their load generator on one machine:
// `--pin SERVER_CPU,CLIENT_CPU` puts every server process on one core (started under
// `taskset -c SERVER_CPU`) and the bench process, every thread of it, on another
// (`taskset -a -p -c CLIENT_CPU <pid>`), so that the client does not take the server's core.
// taskset is util-linux's; without it the flag is refused rather than silently ignored.
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

/** The taskset binary's version line, or an error saying how to get it. */
function tasksetVersion() {
  try {
    return execFileSync('taskset', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    const why = error.code === 'ENOENT' ? 'taskset is not installed' : `\`taskset --version\` failed: ${error.message}`;
    throw new Error(`--pin needs taskset from util-linux (${why}): apt-get install -y util-linux, or run without --pin`);
  }
}

/**
 * Parses `--pin SERVER_CPU,CLIENT_CPU` (two different CPU numbers this machine has) and checks
 * that taskset is there. Returns undefined when the flag was not given.
 */
export function parsePin(text) {
  if (text === undefined) return undefined;
  const parts = text.split(',').map((part) => part.trim());
  const count = cpus().length;
  const [server, client] = parts.map(Number);
  if (parts.length !== 2 || !parts.every((part) => /^\d+$/.test(part))) {
    throw new Error(`--pin takes two CPU numbers, SERVER_CPU,CLIENT_CPU (e.g. --pin 0,1); got '${text}'`);
  }
  if (server === client) throw new Error(`--pin ${text}: the server and the client need different CPUs (e.g. --pin 0,1)`);
  for (const cpu of [server, client]) {
    if (cpu >= count) throw new Error(`--pin ${text}: this machine has CPUs 0-${count - 1}, not ${cpu}`);
  }
  return { serverCpu: server, clientCpu: client, taskset: tasksetVersion() };
}

/** The command and arguments that start `file args` on the server CPU (unchanged without a pin). */
export function onServerCpu(pin, file, args) {
  return pin === undefined ? [file, args] : ['taskset', ['-c', String(pin.serverCpu), file, ...args]];
}

/**
 * Moves every thread of this process to the client CPU (threads started later inherit it) and
 * returns what the kernel now reports for this process (`taskset -p`'s line).
 */
export function pinSelf(pin) {
  execFileSync('taskset', ['-a', '-p', '-c', String(pin.clientCpu), String(process.pid)], { stdio: ['ignore', 'pipe', 'pipe'] });
  return affinityOf(process.pid);
}

/** `taskset -c -p PID`'s answer, e.g. "pid 123's current affinity list: 0". */
export function affinityOf(pid) {
  return execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8' }).trim();
}
