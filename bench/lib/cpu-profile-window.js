// Self time of a V8 .cpuprofile within a time window, grouped: every WebAssembly function
// as one "kernel (wasm)" entry, the rest by function and file. For bench/s3-overhead.js.
import { readFileSync } from 'node:fs';

/** { totalMs, entries: [[name, ms]] sorted by ms } for the samples between from and to (µs, process.hrtime clock). */
export function profileWindow(file, from, to) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  let total = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (at < from || at > to) continue;
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const { functionName, url, lineNumber } = nodes.get(profile.samples[i]).callFrame;
    const name = url.startsWith('wasm') ? 'kernel (wasm)' : `${functionName || '(anonymous)'} ${url.split('/').pop()}${url ? `:${lineNumber + 1}` : ''}`;
    self.set(name, (self.get(name) ?? 0) + ms);
    total += ms;
  }
  return { totalMs: total, entries: [...self].sort((a, b) => b[1] - a[1]) };
}
