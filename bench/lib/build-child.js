// One isolated build: node bench/lib/build-child.js INPUT OUT WEIGHT
// Prints one JSON line: seconds of buildDataset (input file to dataset file), the peak RSS
// of the process (VmHWM, Node itself included; baselineRssBytes is the RSS before) and the
// output size.
import { peakRss } from './timing.js';

const [input, out, weight] = process.argv.slice(2);
const { buildDataset } = await import(new URL('../../dist/index.js', import.meta.url).href);
globalThis.gc?.();
const baselineRssBytes = process.memoryUsage().rss;
const start = performance.now();
const report = await buildDataset(input, { weights: [weight], survey: 'BENCH', out });
const seconds = (performance.now() - start) / 1000;
console.log(JSON.stringify({ seconds, peakRssBytes: peakRss(), baselineRssBytes, bytes: report.bytes, respondents: report.respondents }));
