// One isolated ingest: node --expose-gc bench/lib/ingest-child.js PEER DATASET [THREADS]
// Prints one JSON line: seconds from CSV.gz to the peer's queryable form, and the
// process's peak RSS (VmHWM; includes Node itself: baselineRssBytes is the RSS before ingest).
import { loadColumnStore } from './column-store.js';
import { dataset as datasetById } from './datasets.js';
import { PEERS } from '../peers/index.js';
import { peakRss } from './timing.js';

const [peerName, datasetId, threads] = process.argv.slice(2);
const entry = PEERS.find((p) => p.name === peerName);
if (!entry) throw new Error(`ingest-child: unknown peer '${peerName}'`);
const peer = (await entry.load()).createPeer({ threads: threads ? Number(threads) : undefined });
const availability = await peer.available();
if (!availability.ok) {
  console.log(JSON.stringify({ peer: peerName, dataset: datasetId, skipped: availability.reason }));
} else {
  const dataset = datasetById(datasetId);
  globalThis.gc?.();
  const baselineRssBytes = process.memoryUsage().rss;
  const start = performance.now();
  const store = peer.usesColumnStore ? await loadColumnStore(dataset) : null;
  const parseSeconds = (performance.now() - start) / 1000;
  const details = await peer.prepare({ dataset, store });
  const seconds = (performance.now() - start) / 1000;
  const peakRssBytes = peakRss();
  console.log(JSON.stringify({ peer: peerName, dataset: datasetId, seconds, parseSeconds: store ? parseSeconds : null, peakRssBytes, baselineRssBytes, details: { ...details, sql: undefined } }));
  await peer.close();
}
