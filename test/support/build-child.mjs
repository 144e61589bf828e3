// Builds a dataset in a fresh process and prints its peak RSS (resident set, KiB from
// getrusage) with the build report as JSON: memory of the build alone, not of the test runner.
// Usage: node build-child.mjs DIST_INDEX INPUT OUT WEIGHT SURVEY
const [distIndex, input, out, weight, survey] = process.argv.slice(2);
const { buildDataset } = await import(distIndex);
const started = performance.now();
const report = await buildDataset(input, { weights: [weight], survey, out });
const seconds = (performance.now() - started) / 1000;
process.stdout.write(JSON.stringify({ maxRssKiB: process.resourceUsage().maxRSS, seconds, bytes: report.bytes, respondents: report.respondents }));
