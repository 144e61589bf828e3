/**
 * Writes a dataset in segments (SEGMENTED_FORMAT_VERSION): the file of the dataset before a
 * wave, copied by the kernel (copy_file_range: its buffers are neither read into this process
 * nor hashed again) and cut at its footer, then the wave's parts as record batches, then a
 * footer whose segment table adds the wave's segment to the old file's (a file not in
 * segments is one segment, each buffer its own part). The copy does not depend on the wave:
 * it starts as soon as the dataset is opened (startSegmentCopy) and goes on, with its sync,
 * in the thread pool while the wave is read and planned.
 */
import { type BigIntStats, constants } from 'node:fs';
import { copyFile, open, rename, rm, stat } from 'node:fs/promises';
import { CrosstabError, ErrorCode, throwIfCancelled } from '../../errors.js';
import type { BufferSpec } from '../build/compile.js';
import { BUILD_CANCELLED_HINT, CHECKSUM_KEY, FORMAT_KEY, SEGMENTED_FORMAT_VERSION, SEGMENTS_KEY, type StoredMeta, type StoredSegments } from '../format.js';
import { readArrowStructure } from './arrow-file.js';
import { temporaryBeside } from './atomic-write.js';
import { storedRows } from './reader.js';
import { writeContinued } from './writer.js';

/**
 * The wave's part of a buffer of the extended dataset (in the order of its buffers): the
 * stored buffer over the wave's respondents alone (`spec` and `bytes`; none when it holds
 * none of them), and the buffer of the dataset before the wave it extends (`from`, a buffer
 * row; none for a new value's container), whose ranks map to the ranks now by `rankNow`
 * when a new value sorts between old ones.
 */
export interface WavePart {
  name: string;
  from: number | undefined;
  rankNow?: Uint32Array;
  spec?: BufferSpec;
  bytes?: Uint8Array;
}

/** How many segments a dataset file has (1: not in segments). */
export function segmentCount(schemaMetadata: Map<string, string>): number {
  const json = schemaMetadata.get(SEGMENTS_KEY);
  return json === undefined ? 1 : (JSON.parse(json) as StoredSegments).respondents.length;
}

/**
 * The copy of a dataset file to a temporary file beside the file an append writes, started
 * at once (a clone where the file system shares blocks between files, such as btrfs and XFS,
 * else a copy in the kernel), then synced, in the thread pool. The file at the dataset's path
 * is stamped first: one put there afterwards, before the segment is renamed into place, is
 * refused. writeSegment() takes the copy (and removes it on failure); discard() removes it
 * when no segment is written. Neither leaves the copy's promise unhandled.
 */
export class SegmentCopy {
  readonly temp: string;
  /** Settles when the copy and its sync have; never rejects. */
  private readonly settled: Promise<void>;
  private failure: { error: unknown } | undefined;
  private copiedFile: string | undefined;

  constructor(
    readonly dataset: string,
    out: string,
  ) {
    this.temp = temporaryBeside(out);
    this.settled = this.copy().catch((error: unknown) => {
      this.failure = { error };
    });
  }

  private async copy(): Promise<void> {
    this.copiedFile = fileIdentity(await stat(this.dataset, { bigint: true }));
    await copyFile(this.dataset, this.temp, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    const file = await open(this.temp, 'r+');
    try {
      // Most of the bytes to disk while the wave is read: the sync after its parts has little left to write.
      await file.datasync();
    } finally {
      await file.close();
    }
  }

  /** Waits for the copy and its sync; rejects with the copy's error. */
  async copied(): Promise<void> {
    await this.settled;
    if (this.failure !== undefined) throw this.failure.error;
  }

  /** Whether the dataset's path still names the file copied, unchanged. */
  async stillAtPath(): Promise<boolean> {
    const now = await stat(this.dataset, { bigint: true }).catch(() => undefined);
    return now !== undefined && fileIdentity(now) === this.copiedFile;
  }

  /** Waits for the copy to settle, then removes the copied file. */
  async discard(): Promise<void> {
    await this.settled;
    await rm(this.temp, { force: true });
  }
}

/** The file a path names and its stamp (device, inode, size, modification time). */
function fileIdentity(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}`;
}

/**
 * Writes `out` (beside it, synced, then renamed over it): the dataset file of `copy`, whose
 * checksum is `checksum` (as opened: a file replaced since is refused), with the wave's
 * segment of `added` respondents; `meta` is the extended dataset's metadata and `specs` its
 * buffers, `parts` their wave parts in the same order. The copy is removed on any failure.
 */
export async function writeSegment(copy: SegmentCopy, checksum: string, added: number, meta: StoredMeta, specs: BufferSpec[], parts: Iterable<WavePart>, out: string, signal?: AbortSignal): Promise<{ bytes: number; checksum: string }> {
  const { dataset, temp } = copy;
  const replaced = () => new CrosstabError(ErrorCode.corruptDataset, `${dataset} was replaced while the wave was appended to it: nothing was written`, { file: dataset, hint: 'Append the wave again.' });
  try {
    throwIfCancelled(signal, 'the append', BUILD_CANCELLED_HINT);
    await copy.copied();
    const file = await open(temp, 'r+');
    let written: { bytes: number; checksum: string };
    try {
      const { size } = await file.stat();
      const structure = readArrowStructure(file.fd, size);
      if (structure.schema.metadata.get(CHECKSUM_KEY) !== checksum) throw replaced();
      const rows = storedRows(dataset, file.fd, structure);
      const format = structure.schema.metadata.get(FORMAT_KEY);
      const before: StoredSegments =
        format === SEGMENTED_FORMAT_VERSION
          ? (JSON.parse(structure.schema.metadata.get(SEGMENTS_KEY)!) as StoredSegments)
          : { respondents: [meta.respondents - added], buffers: rows.map((row, i) => ({ name: row.name, kind: row.kind, count: row.count, parts: [{ segment: 0, row: i }] })), maps: [] };
      // The file's record batches end where its footer starts: the wave's follow them.
      const end = Math.max(8, ...structure.blocks.map((block) => block.offset + block.metaDataLength + block.bodyLength));
      await file.truncate(end);
      const { segments, waveSpecs, waveBytes } = segmentTable(before, added, specs, parts, rows.length);
      const continuation = { rows: rows.map(({ name, kind, count, stored, hash }) => ({ name, kind, count, stored, hash })), blocks: structure.blocks, format: SEGMENTED_FORMAT_VERSION, segmentsJson: JSON.stringify(segments) };
      written = await writeContinued(file, end, { meta, specs: waveSpecs, data: () => waveBytes }, continuation, signal);
      await file.sync();
    } finally {
      await file.close();
    }
    throwIfCancelled(signal, 'the append', BUILD_CANCELLED_HINT);
    // The file copied is still the one at the dataset's path (a new version put there meanwhile is not written over).
    if (!(await copy.stillAtPath())) throw replaced();
    await rename(temp, out);
    return written;
  } catch (error) {
    await copy.discard();
    throw error;
  }
}

/** The segment table with the wave's segment, and the wave's parts to write (rows `firstRow` on of the buffer table). */
function segmentTable(before: StoredSegments, added: number, specs: BufferSpec[], parts: Iterable<WavePart>, firstRow: number): { segments: StoredSegments; waveSpecs: BufferSpec[]; waveBytes: Uint8Array[] } {
  const segment = before.respondents.length;
  const maps = [...before.maps];
  const buffers: StoredSegments['buffers'] = [];
  const waveSpecs: BufferSpec[] = [];
  const waveBytes: Uint8Array[] = [];
  let row = 0;
  for (const part of parts) {
    const spec = specs[row++];
    if (spec === undefined || spec.name !== part.name) throw new Error(`appendRows: the wave's part ${part.name} is not that of buffer ${spec?.name}`);
    const { rankNow } = part;
    const old = part.from === undefined ? [] : before.buffers[part.from]!.parts;
    const carried = old.map((entry): StoredSegments['buffers'][number]['parts'][number] => {
      if (rankNow === undefined) return entry;
      // The old part's ranks taken to the ranks now: through its map to the ranks before the wave, then rankNow.
      const map = entry.map === undefined ? Array.from(rankNow) : maps[entry.map]!.map((rank) => rankNow[rank]!);
      return { segment: entry.segment, row: entry.row, map: maps.push(map) - 1 };
    });
    if (part.spec !== undefined && part.bytes !== undefined) {
      carried.push({ segment, row: firstRow + waveSpecs.length });
      waveSpecs.push(part.spec);
      waveBytes.push(part.bytes);
    }
    buffers.push({ name: spec.name, kind: spec.kind, count: spec.count, parts: carried });
  }
  if (row !== specs.length) throw new Error(`appendRows: ${row} wave parts for ${specs.length} buffers`);
  // The maps some part still names, renumbered (a map replaced by its composition with the wave's ranks is dropped).
  const kept: number[][] = [];
  const renumbered = new Map<number, number>();
  for (const buffer of buffers) {
    for (const part of buffer.parts) {
      if (part.map === undefined) continue;
      if (!renumbered.has(part.map)) renumbered.set(part.map, kept.push(maps[part.map]!) - 1);
      part.map = renumbered.get(part.map)!;
    }
  }
  return { segments: { respondents: [...before.respondents, added], buffers, maps: kept }, waveSpecs, waveBytes };
}
