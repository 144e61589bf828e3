// Printed tables (aligned text for the terminal, Markdown for results files).

export const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
export function fmtRate(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '-';
  if (x >= 1e9) return `${(x / 1e9).toFixed(2)}G`;
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)}M`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(1)}K`;
  return x.toFixed(1);
}
export const fmtBytes = (b) => (b >= 1e9 ? `${(b / 1e9).toFixed(2)} GB` : `${(b / 1e6).toFixed(0)} MB`);
export const fmtInt = (n) => n.toLocaleString('en-US');

/** Aligned text table; numeric-looking cells right-aligned. */
export function textTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const numeric = (s) => /^[-+]?[\d.,]+[KMG%x]?( ms| s| MB| GB)?$|^-$/.test(String(s));
  const line = (cells) => cells.map((c, i) => (numeric(c) && i > 0 ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function markdownTable(header, rows) {
  const esc = (s) => String(s).replace(/\|/g, '\\|');
  return [`| ${header.map(esc).join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}

export const SHAPE_HEADER = ['peer', 'median ms', 'min ms', 'max ms', 'reps', 'cells/s', 'x best', 'method'];

export function shapeRows(shape) {
  return shape.results.map((r) => [
    r.contestant,
    fmtMs(r.median), fmtMs(r.min), fmtMs(r.max), String(r.reps),
    fmtRate(r.cellsPerSec), `${r.ratioToBest.toFixed(2)}x`, r.method ?? '',
  ]);
}

export const INGEST_HEADER = ['peer', 'dataset', 'seconds', 'peak RSS', 'RSS before', 'how measured'];

export function ingestRows(ingest) {
  return ingest.map((i) => (i.skipped
    ? [i.peer, i.dataset, '-', '-', '-', `skipped: ${i.skipped}`]
    : [i.peer, i.dataset, `${i.seconds.toFixed(1)} s`, i.peakRssBytes ? fmtBytes(i.peakRssBytes) : '-', i.baselineRssBytes ? fmtBytes(i.baselineRssBytes) : '-', i.how]));
}

export function boundsLines(bounds) {
  if (!bounds) return ['(not measured)'];
  const d = bounds.derived;
  return [
    `method: ${bounds.method}`,
    `popcount: ${bounds.popcntWordsPerNs.toFixed(2)} 64-bit words/ns/core; AND+popcount: ${bounds.andPopcntWordsPerNs.toFixed(2)} words/ns/core (L1-resident)`,
    `memory read: ${bounds.readGBps1.toFixed(1)} GB/s one thread${bounds.readGBpsAll ? `, ${bounds.readGBpsAll.toFixed(1)} GB/s ${bounds.threads} threads` : ''}; memcpy ${bounds.copyGBps.toFixed(1)} GB/s copied`,
    ...(bounds.kernelRead ? [`kernel memory read (${bounds.kernelRead.method}): ${bounds.kernelRead.readGBps1.toFixed(1)} GB/s one thread, ${bounds.kernelRead.readGBpsAll.toFixed(1)} GB/s ${bounds.kernelRead.threads} threads`] : []),
    `=> one dense ACS bitset = ${fmtInt(d.wordsPerBitset)} words (${(d.bitsetBytes / 1024).toFixed(0)} KiB): at most ${fmtRate(d.denseCellsPerSecPerCore_popcount)} dense cells/s/core by AND+popcount, ${fmtRate(d.denseCellsPerSec_memory)} cells/s if each cell streams one bitset from RAM`,
  ];
}
