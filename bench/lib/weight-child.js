// One isolated weighting run: node bench/lib/weight-child.js DATASET TARGETS OUT EPSILON MAXIT
// Prints one JSON line: seconds of weightDataset() (open, read, rake, write), the peak RSS of
// the process (VmHWM, Node itself included; baselineRssBytes is the RSS before), respondents,
// passes and the written file's size.
import { peakRss } from './timing.js';

const [dataset, targets, out, epsilon, maxIterations] = process.argv.slice(2);
const { weightDataset } = await import(new URL('../../dist/index.js', import.meta.url).href);
globalThis.gc?.();
const baselineRssBytes = process.memoryUsage().rss;
const start = performance.now();
const report = await weightDataset(dataset, { targets, method: 'rake', name: 'wt_rake', out, epsilon: Number(epsilon), maxIterations: Number(maxIterations) });
const seconds = (performance.now() - start) / 1000;
console.log(JSON.stringify({ seconds, peakRssBytes: peakRss(), baselineRssBytes, respondents: report.respondents, iterations: report.sets[0].iterations, bytes: report.bytes }));
