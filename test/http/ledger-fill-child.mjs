// Run by ledger-pipelined.test.ts under `ulimit -S -f N` (a real file-size limit: the kernel
// refuses a write past it as a full disk does). Records into the ledger at argv[2] in waves,
// each wave once the one before was appended, until writes fail part way; then lifts the
// limit and records more. Prints, as JSON, the records resolved (in the order they resolved)
// and those refused.
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { setImmediate as tick } from 'node:timers/promises';

const [path, module] = process.argv.slice(2);
const { NdjsonLedger } = await import(module);
const events = [];
// overlapWaitMs 0: every wave starts its flush at once, so several are in flight when a write fails.
const ledger = await NdjsonLedger.open(path, { overlapWaitMs: 0, onEvent: (event) => events.push(event) });
const resolved = [];
const refused = [];
const record = (requestId) =>
  ledger.record({ time: new Date().toISOString(), requestId, keyId: 'key_x', survey: 'GSS', targets: 1 }).then(
    () => resolved.push(requestId),
    (error) => refused.push({ requestId, code: error.code }),
  );
const calls = [];
for (let wave = 0; wave < 12; wave++) {
  const size = statSync(path).size;
  for (let i = 0; i < 4; i++) calls.push(record(`w${wave}-${i}`));
  for (let spin = 0; spin < 1000 && statSync(path).size === size; spin++) await tick();
}
await Promise.all(calls);
execFileSync('prlimit', ['--pid', String(process.pid), '--fsize=unlimited']);
await Promise.all(Array.from({ length: 4 }, (_, i) => record(`after-${i}`)));
await ledger.close();
process.stdout.write(JSON.stringify({ resolved, refused, events, mostInFlight: ledger.stats.mostInFlight }));
