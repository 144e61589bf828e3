// Builds a dataset in a fresh process and prints its peak RSS (KiB) with the build report
// as JSON: memory of the build alone, not of the test runner. The peak is VmHWM from
// /proc/self/status (getrusage's maxRSS survives fork+exec, so it could report the parent's).
// Usage: node build-child.mjs DIST_INDEX INPUT OUT WEIGHT SURVEY
import { readFileSync } from 'node:fs';

const [distIndex, input, out, weight, survey] = process.argv.slice(2);
const { buildDataset } = await import(distIndex);
const started = performance.now();
const report = await buildDataset(input, { weights: [weight], survey, out });
const seconds = (performance.now() - started) / 1000;
const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
const maxRssKiB = hwm ? Number(hwm[1]) : process.resourceUsage().maxRSS;
process.stdout.write(JSON.stringify({ maxRssKiB, seconds, bytes: report.bytes, respondents: report.respondents }));
