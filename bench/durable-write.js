#!/usr/bin/env node
// What one durable write costs on this machine's disk: the floor under the usage ledger's
// group commit (src/http/usage-ledger.ts). Writes of one ledger batch's size, each made
// durable by O_DSYNC or by write + fdatasync (what the ledger does, several batches in
// flight: bench/ledger-pipeline.js measures that), and plain writes.
//
//   node bench/durable-write.js [--dir DIR] [--writes 2000] [--bytes 700]
//
// Prints wall time and CPU time (user + system, this process) per write. The CPU part is
// what a batch costs the machine whatever its size; on a machine that also runs the load
// generator it is taken from the requests.
import { closeSync, constants, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: options } = parseArgs({ options: { dir: { type: 'string', default: tmpdir() }, writes: { type: 'string', default: '2000' }, bytes: { type: 'string', default: '700' } } });
const writes = Number(options.writes);
const folder = mkdtempSync(join(options.dir, 'durable-write-'));
const path = join(folder, 'ledger.ndjson');
const line = Buffer.alloc(Number(options.bytes), 0x61);
console.log(`${new Date().toISOString()}  node ${process.version}  ${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}  load ${loadavg()[0].toFixed(1)}  ${writes} writes of ${line.length} bytes in ${options.dir}`);
try {
  for (const mode of ['O_DSYNC', 'write + fdatasync', 'plain write']) {
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_TRUNC | (mode === 'O_DSYNC' ? constants.O_DSYNC : 0));
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < writes; i++) {
      writeSync(fd, line);
      if (mode === 'write + fdatasync') fdatasyncSync(fd);
    }
    const wallMicros = ((performance.now() - started) * 1000) / writes;
    const used = process.cpuUsage(cpu);
    closeSync(fd);
    console.log(`${mode.padEnd(18)} ${wallMicros.toFixed(0).padStart(6)} µs wall  ${((used.user + used.system) / writes).toFixed(0).padStart(5)} µs CPU per write`);
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
