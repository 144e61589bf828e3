/**
 * Writes a dataset in segments (SEGMENTED_FORMAT_VERSION): the file of the dataset before a
 * wave, copied by the kernel up to its footer (copy_file_range: its buffers are neither read
 * into this process nor hashed again), then the wave's parts as record batches, then a footer
 * whose segment table adds the wave's segment to the old file's (a file not in segments is
 * one segment, each buffer its own part).
 */
import { randomBytes } from 'node:crypto';
import { constants, copyFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CrosstabError, ErrorCode, throwIfCancelled } from '../../errors.js';
import type { BufferSpec } from '../build/compile.js';
import { BUILD_CANCELLED_HINT, CHECKSUM_KEY, FORMAT_KEY, SEGMENTED_FORMAT_VERSION, SEGMENTS_KEY, type StoredMeta, type StoredSegments } from '../format.js';
import { readArrowStructure } from './arrow-file.js';
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
 * Writes `out` (beside it, synced, then renamed over it): the dataset file `dataset`, whose
 * checksum is `checksum` (as opened: a file replaced since is refused), with the wave's
 * segment of `added` respondents; `meta` is the extended dataset's metadata and `specs` its
 * buffers, `parts` their wave parts in the same order.
 */
export async function writeSegment(dataset: string, checksum: string, added: number, meta: StoredMeta, specs: BufferSpec[], parts: Iterable<WavePart>, out: string, signal?: AbortSignal): Promise<{ bytes: number; checksum: string }> {
  throwIfCancelled(signal, 'the append', BUILD_CANCELLED_HINT);
  const temp = join(dirname(out), `.${basename(out)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    // A clone where the file system shares blocks between files (btrfs, XFS), else a copy in the kernel.
    copyFileSync(dataset, temp, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    const file = await open(temp, 'r+');
    let written: { bytes: number; checksum: string };
    try {
      const { size } = await file.stat();
      const structure = readArrowStructure(file.fd, size);
      if (structure.schema.metadata.get(CHECKSUM_KEY) !== checksum) {
        throw new CrosstabError(ErrorCode.corruptDataset, `${dataset} was replaced while the wave was appended to it: nothing was written`, { file: dataset, hint: 'Append the wave again.' });
      }
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
    await rename(temp, out);
    return written;
  } catch (error) {
    await rm(temp, { force: true });
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
