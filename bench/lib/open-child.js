// One cold open: node bench/lib/open-child.js DATASET BASE TARGET [preload|full|verify]
// preload: openDataset(path, { preload: true }); full: { verify: 'full' } (every buffer read
// and checked at open, as `crosstab serve` reloads a file); verify: the default open, then
// dataset.verify() (as `crosstab serve` starts). Prints one JSON line: ms to import the
// package, to open (verify included), and to the first crosstab answer; RSS after open and
// after the first query; the answer (checked by the caller).
const [path, base, target, preload] = process.argv.slice(2);
const t0 = performance.now();
const { openDataset } = await import(new URL('../../dist/index.js', import.meta.url).href);
const t1 = performance.now();
const ds = await openDataset(path, preload === 'full' ? { verify: 'full' } : { preload: preload === 'preload' });
if (preload === 'verify') ds.verify();
const t2 = performance.now();
const rssAfterOpenBytes = process.memoryUsage().rss;
const result = await ds.crosstab({ base, targets: [target] });
const t3 = performance.now();
console.log(JSON.stringify({
  importMs: t1 - t0, openMs: t2 - t1, firstQueryMs: t3 - t2, openToAnswerMs: t3 - t1,
  rssAfterOpenBytes, rssAfterQueryBytes: process.memoryUsage().rss,
  answer: { weighted: result.targets[0].weighted, respondents: result.targets[0].respondents },
}));
ds.close();
