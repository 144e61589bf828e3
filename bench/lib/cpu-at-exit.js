// Loaded with `node --import` into a child process: when it exits, writes its own CPU time
// (user and system, every thread of the process) and peak RSS as JSON to $CPU_AT_EXIT_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.CPU_AT_EXIT_FILE;
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ userMs: usage.userCPUTime / 1000, systemMs: usage.systemCPUTime / 1000, maxRssKB: usage.maxRSS }));
  });
}
