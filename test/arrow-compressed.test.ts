// Compressed Arrow IPC files (LZ4 frame, Zstandard: Feather V2 as pyarrow and pandas write it
// by default) build the same dataset as the same table uncompressed, on one thread and with
// the columns read by worker threads. The compressed buffers are made by the real `lz4` and
// `zstd` tools (Debian's lz4 and zstd; CI installs them), with linked and independent
// blocks, 64 KB to 4 MB blocks, block checksums and content sizes; the LZ4 frame reader is
// also checked on its own against `lz4` on random data with long runs and overlapping
// matches. Runs the built CLI (`npm run build:ts` first).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Dictionary, Float64, Int32, Int64, RecordBatch, RecordBatchFileWriter, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { CompressionType } from 'apache-arrow/fb/compression-type';
import { compressionRegistry } from 'apache-arrow/ipc/compression/registry';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain-JavaScript bench helper without types
import { buildFingerprint } from '../bench/lib/build-fingerprint.js';
import { decodeLz4Frame } from '../src/dataset/input/arrow-codecs.js';
import { cliPath } from './support/paths.js';

const tools = ['lz4', 'zstd'].filter((tool) => spawnSync(tool, ['--version']).status !== 0);
if (tools.length > 0 && process.env.CI) throw new Error(`${tools.join(' and ')} must be installed (apt-get install lz4 zstd)`);
const describeWithTools = tools.length > 0 ? describe.skip : describe;
if (tools.length > 0) console.warn(`SKIPPED: compressed Arrow IPC tests need ${tools.join(' and ')} (apt-get install lz4 zstd).`);

function tool(command: string, args: string[], input: Uint8Array): Uint8Array {
  const run = spawnSync(command, [...args, '-c', '-q'], { input, maxBuffer: 1 << 28 });
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${run.stderr}`);
  return new Uint8Array(run.stdout.buffer, run.stdout.byteOffset, run.stdout.byteLength);
}

const dir = mkdtempSync(join(tmpdir(), 'crosstab-arrow-compressed-'));
const plain = join(dir, 'plain.arrow');
const rows = 60_000;
/** Compressed files: codec, the tool's flags, and the file. */
const variants = [
  { codec: CompressionType.LZ4_FRAME, command: 'lz4', flags: ['-B4', '-BD'], name: 'lz4-64k-linked' },
  { codec: CompressionType.LZ4_FRAME, command: 'lz4', flags: ['-B5', '-BX', '--content-size'], name: 'lz4-256k-checksums-size' },
  { codec: CompressionType.LZ4_FRAME, command: 'lz4', flags: ['-9'], name: 'lz4-default-blocks-hc' },
  { codec: CompressionType.ZSTD, command: 'zstd', flags: ['-3'], name: 'zstd' },
  { codec: CompressionType.ZSTD, command: 'zstd', flags: ['-19', '--no-check'], name: 'zstd-19' },
].map((variant) => ({ ...variant, file: join(dir, `${variant.name}.arrow`) }));

function table(): Table {
  const index = Array.from({ length: rows }, (_, i) => i);
  const whole = new Table({
    small: vectorFromArray(index.map((i) => (i % 7 === 0 ? null : BigInt(((i * 37) % 101) - 50))), new Int64()),
    wide: vectorFromArray(index.map((i) => (i % 11 < 3 ? null : (i * i) % 70001)), new Int32()),
    region: vectorFromArray(index.map((i) => (i % 6 === 0 ? null : `région ${i % 13}`)), new Utf8()),
    kind: vectorFromArray(index.map((i) => (i % 9 === 4 ? null : ['alpha', 'beta', 'gamma', 'delta'][(i * 7) % 4]!)), new Dictionary(new Utf8(), new Int32())),
    // Values that do not compress (stored blocks) beside ones that do.
    ratio: vectorFromArray(index.map((i) => (i % 5 === 0 ? null : Math.round(Math.abs(Math.sin(i * 12.9898)) * 43758.5453 * 1e4) / 1e4)), new Float64()),
    w: vectorFromArray(index.map((i) => 1 + (i % 10) / 4), new Float64()),
  });
  const batches: RecordBatch[] = [];
  for (const batch of whole.batches) for (let at = 0; at < batch.numRows; at += 25_000) batches.push(batch.slice(at, at + 25_000));
  return new Table(batches);
}

function write(path: string, codec: CompressionType | null): void {
  const writer = RecordBatchFileWriter.writeAll(table(), { compressionType: codec });
  writeFileSync(path, writer.toUint8Array(true));
}

function build(input: string, out: string, threads: number): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [cliPath, 'build', input, '--weight', 'w', '--survey', 'T', '--out', out, '--threads', String(threads)], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

function contains(bytes: Uint8Array, magic: number[]): boolean {
  return Buffer.from(bytes).indexOf(Buffer.from(magic)) >= 0;
}

const LZ4_MAGIC = [0x04, 0x22, 0x4d, 0x18];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

describeWithTools('compressed Arrow IPC input', () => {
  beforeAll(() => {
    write(plain, null);
    for (const variant of variants) {
      // The writer compresses each buffer with the real tool (this process only: the build reads with its own decoders).
      compressionRegistry.set(variant.codec, { encode: (data: Uint8Array) => tool(variant.command, variant.flags, data), decode: () => new Uint8Array(0) });
      write(variant.file, variant.codec);
    }
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('builds the same dataset as the uncompressed file, on one thread and on workers', async () => {
    const expected = join(dir, 'plain.built.arrow');
    expect(build(plain, expected, 0).status).toBe(0);
    const fingerprint = await buildFingerprint(expected);
    for (const variant of variants) {
      const bytes = readFileSync(variant.file);
      expect(contains(bytes, variant.codec === CompressionType.ZSTD ? ZSTD_MAGIC : LZ4_MAGIC), variant.name).toBe(true);
      for (const threads of [0, 2]) {
        const out = join(dir, `${variant.name}-${threads}.built.arrow`);
        const run = build(variant.file, out, threads);
        expect(run.status, `${variant.name}, --threads ${threads}: ${run.stderr}`).toBe(0);
        expect(await buildFingerprint(out), `${variant.name}, --threads ${threads}`).toBe(fingerprint);
      }
    }
  }, 180_000);

  it('refuses a damaged compressed buffer with invalid_input naming the file, and writes nothing', () => {
    const variant = variants[0]!;
    const bytes = Buffer.from(readFileSync(variant.file));
    const at = bytes.indexOf(Buffer.from(LZ4_MAGIC));
    bytes[at + 1] = bytes[at + 1]! ^ 0xff; // the first compressed buffer's frame no longer starts with the magic number
    const damaged = join(dir, 'damaged.arrow');
    writeFileSync(damaged, bytes);
    for (const threads of [0, 2]) {
      const out = join(dir, `damaged-${threads}.built.arrow`);
      const run = build(damaged, out, threads);
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain('[invalid_input]');
      expect(run.stderr).toContain(damaged);
      expect(run.stderr).toContain('LZ4');
      expect(existsSync(out)).toBe(false);
    }
  }, 60_000);

  it('reads LZ4 frames exactly as lz4 wrote them: runs, overlapping matches, stored and linked blocks', () => {
    const flagSets = [[], ['-B4', '-BD'], ['-B4', '-BX', '--content-size'], ['-9', '-B5', '-BD'], ['--no-frame-crc', '-B6']];
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.uint8Array({ minLength: 1, maxLength: 2_000 }),
            fc.record({ byte: fc.integer({ min: 0, max: 255 }), times: fc.integer({ min: 1, max: 70_000 }) }).map(({ byte, times }) => new Uint8Array(times).fill(byte)),
            fc.record({ period: fc.uint8Array({ minLength: 1, maxLength: 7 }), times: fc.integer({ min: 1, max: 20_000 }) }).map(({ period, times }) => Uint8Array.from({ length: period.length * times }, (_, i) => period[i % period.length]!)),
          ),
          { minLength: 0, maxLength: 12 },
        ),
        fc.constantFrom(...flagSets),
        (pieces, flags) => {
          const data = Buffer.concat(pieces);
          const frame = tool('lz4', flags, data);
          expect(Buffer.from(decodeLz4Frame(frame)).equals(data)).toBe(true);
          // Truncated anywhere: refused, never a shorter answer.
          if (frame.length > 8) expect(() => decodeLz4Frame(frame.subarray(0, frame.length - 1 - (data.length % 5)))).toThrow(/LZ4/);
        },
      ),
      { numRuns: 60, seed: 20261126 },
    );
  }, 120_000);
});
