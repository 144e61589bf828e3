import { gunzipSync } from 'node:zlib';
import type { ColumnMetaData, Compressors, SchemaElement } from 'hyparquet';
import { Encodings, PageTypes } from 'hyparquet/src/constants.js';
import { deserializeTCompactProtocol } from 'hyparquet/src/thrift.js';
import { snappyUncompressor } from 'hysnappy';
import { zstdPage, zstdReady } from './zstd-pages.js';
import { dictionaryPageDecoder, type LevelBytes } from './parquet-dictionary-ids.js';
import { type FlatType, type PageBytes, readHybrid, readLevels, readPlain, spreadCells, spreadIds, spreadIndices, spreadNumbers } from './parquet-pages.js';
import type { PlainTextColumn } from './parquet-texts.js';
import { CrosstabError } from '../../errors.js';
import { type CellValue, type ColumnEncoder, inputError, type WeightEncoder } from './table-encoder.js';

/**
 * Reads one column chunk of a flat Parquet column (one row group's values of one column)
 * page by page into its encoder: dictionary pages once, data pages (v1 and v2) as
 * dictionary indices or PLAIN values, nulls from the definition levels.
 */

/** Encodings {@link storeColumnChunk} reads; a chunk using any other goes to hyparquet. */
const ownEncodings = new Set(['PLAIN', 'RLE', 'PLAIN_DICTIONARY', 'RLE_DICTIONARY']);

/**
 * Page decompressors by codec. SNAPPY, GZIP and ZSTD are here from the start; the codecs
 * only hyparquet-compressors decodes (`laterCodecs`) are added by codecsReady() for a file
 * that uses them, so that a reader thread does not load that package (its gzip and brotli
 * tables, its WebAssembly) for nothing: some 40 ms of CPU per thread.
 */
const decompressors: Compressors = {
  SNAPPY: snappyUncompressor(),
  GZIP: (input) => gunzipSync(input),
  ZSTD: zstdPage,
};
const laterCodecs = ['BROTLI', 'LZ4', 'LZ4_RAW'] as const;

/** Loads the decoders of `codecs` in this thread (the ZSTD decoder, hyparquet-compressors' codecs), before chunks using them are read. */
export async function codecsReady(codecs: Iterable<string>): Promise<void> {
  const wanted = new Set(codecs);
  if (wanted.has('ZSTD')) await zstdReady();
  if (laterCodecs.some((codec) => wanted.has(codec) && decompressors[codec] === undefined)) {
    const { compressors } = await import('hyparquet-compressors');
    for (const codec of laterCodecs) decompressors[codec] = compressors[codec];
  }
}

/** A page header: the fields of hyparquet's parquetHeader this decoder reads, from hyparquet's own thrift reader. */
function pageHeader(reader: { view: DataView; offset: number }) {
  const header = deserializeTCompactProtocol(reader);
  const v1 = header.field_5;
  const dictionary = header.field_7;
  const v2 = header.field_8;
  return {
    type: PageTypes[header.field_1 as number],
    uncompressed_page_size: header.field_2 as number,
    compressed_page_size: header.field_3 as number,
    data_page_header: v1 && { num_values: v1.field_1 as number, encoding: Encodings[v1.field_2 as number] },
    dictionary_page_header: dictionary && { num_values: dictionary.field_1 as number },
    data_page_header_v2: v2 && {
      num_values: v2.field_1 as number,
      encoding: Encodings[v2.field_4 as number],
      definition_levels_byte_length: v2.field_5 as number,
      repetition_levels_byte_length: v2.field_6 as number,
      // Compressed unless it says otherwise.
      is_compressed: v2.field_7 === undefined ? true : (v2.field_7 as boolean),
    },
  };
}

/**
 * The physical type of `element` if this decoder reads it as the text a CSV export would
 * hold, else undefined (dates, timestamps, decimals, unsigned and binary columns, booleans
 * go to hyparquet, which converts them).
 */
export function flatType(element: SchemaElement): FlatType | undefined {
  const logical = element.logical_type;
  const converted = element.converted_type;
  switch (element.type) {
    case 'INT32':
    case 'INT64': {
      const signed = logical === undefined ? converted === undefined || /^INT_/.test(converted) : logical.type === 'INTEGER' && logical.isSigned;
      return signed ? element.type : undefined;
    }
    case 'FLOAT':
    case 'DOUBLE':
      return logical === undefined && converted === undefined ? element.type : undefined;
    case 'BYTE_ARRAY':
      return logical?.type === 'STRING' || (logical === undefined && converted === 'UTF8') ? 'BYTE_ARRAY' : undefined;
    default:
      return undefined;
  }
}

/** Whether {@link storeColumnChunk} reads a chunk with this metadata (else: which encoding it does not). */
export function unreadEncoding(meta: ColumnMetaData): string | undefined {
  const other = meta.encodings.find((encoding) => !ownEncodings.has(encoding));
  if (other !== undefined) return other;
  if (meta.codec !== 'UNCOMPRESSED' && decompressors[meta.codec] === undefined && !(laterCodecs as readonly string[]).includes(meta.codec)) return `${meta.codec} compression`;
  return undefined;
}

/** Where a chunk's pages are in the file: from its dictionary page (if any) on. */
export function chunkRange(meta: ColumnMetaData): { start: number; end: number } {
  const data = Number(meta.data_page_offset);
  const dictionary = meta.dictionary_page_offset === undefined ? data : Number(meta.dictionary_page_offset);
  // Some writers put 0 for "no dictionary page".
  const start = dictionary > 0 && dictionary < data ? dictionary : data;
  return { start, end: start + Number(meta.total_compressed_size) };
}

export interface FlatColumn {
  type: FlatType;
  /** OPTIONAL: definition levels of 1 bit say which rows have a value. */
  optional: boolean;
  target: ColumnEncoder | WeightEncoder;
  /** A text column whose every chunk is PLAIN pages: encoded over its bytes (its target is a ColumnEncoder). */
  texts?: PlainTextColumn;
}

/** Stores rows `firstRow .. firstRow + rows - 1` of `column` from the chunk's bytes (`chunk`, its pages only). */
export function storeColumnChunk(chunk: Uint8Array, meta: ColumnMetaData, column: FlatColumn, firstRow: number, rows: number): void {
  const reader = { view: new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength), offset: 0 };
  let words: Float64Array | CellValue[] | undefined;
  const target = column.target;
  // Dictionary-encoded pages decode straight into a column's ids, or a weight's numbers when its dictionary is numbers.
  const decoder = dictionaryPageDecoder();
  let decoded = false;
  let done = 0;
  try {
    while (done < rows) {
      if (reader.offset >= chunk.length) throw new Error(`its pages end after ${done} of ${rows} rows`);
      const header = pageHeader(reader);
      const start = reader.offset;
      const end = start + header.compressed_page_size;
      if (end > chunk.length) throw new Error('a page runs past the end of its column chunk');
      reader.offset = end;
      const raw = chunk.subarray(start, end);
      if (header.type === 'DICTIONARY_PAGE') {
        const count = header.dictionary_page_header!.num_values;
        words = readPlain({ bytes: decompress(raw, header.uncompressed_page_size, meta), at: 0 }, column.type, count);
        decoded = 'setIndexIds' in target || words instanceof Float64Array;
        if (decoded) decoder.startDictionary(target, words);
        else decoder.endDictionary();
        continue;
      }
      let page: PageBytes;
      let count: number;
      let encoding: string;
      let levels: LevelBytes | undefined;
      if (header.type === 'DATA_PAGE') {
        const info = header.data_page_header!;
        count = info.num_values;
        encoding = info.encoding;
        page = { bytes: decompress(raw, header.uncompressed_page_size, meta), at: 0 };
        if (column.optional) {
          const length = new DataView(page.bytes.buffer, page.bytes.byteOffset).getUint32(0, true);
          levels = { bytes: page.bytes, at: 4, end: 4 + length };
          page.at = 4 + length;
        }
      } else if (header.type === 'DATA_PAGE_V2') {
        const info = header.data_page_header_v2!;
        count = info.num_values;
        encoding = info.encoding;
        const length = info.definition_levels_byte_length + info.repetition_levels_byte_length;
        if (column.optional) levels = { bytes: raw, at: info.repetition_levels_byte_length, end: length };
        const values = raw.subarray(length);
        page = { bytes: info.is_compressed === false ? values : decompress(values, header.uncompressed_page_size - length, meta), at: 0 };
      } else continue;
      if (done + count > rows) throw new Error(`its pages hold more values than the row group's ${rows} rows`);
      const dictionaryEncoded = encoding === 'PLAIN_DICTIONARY' || encoding === 'RLE_DICTIONARY';
      if (dictionaryEncoded && words === undefined) throw new Error('a dictionary-encoded page comes before any dictionary page');
      if (dictionaryEncoded && decoded) {
        const width = page.bytes[page.at]!;
        decoder.storePage(firstRow + done, count, levels, width, page.bytes, page.at + 1);
        done += count;
        continue;
      }
      let defined: Int32Array | undefined;
      let present = count;
      if (levels !== undefined) {
        defined = new Int32Array(count);
        present = readLevels({ bytes: levels.bytes, at: levels.at }, levels.end, defined, count);
      }
      // From here `defined` is read only where some row is null (present < count).
      if (dictionaryEncoded) {
        const width = page.bytes[page.at++]!;
        const indices = new Int32Array(count);
        readHybrid(page, page.bytes.length, width, indices, present);
        if (present < count) spreadIndices(indices, defined!, present, count);
        storeWeights(target as WeightEncoder, firstRow + done, words!, indices, count);
      } else if (encoding === 'PLAIN' && column.texts !== undefined) {
        const { ids, end } = column.texts.encode(page.bytes, page.at, present);
        page.at = end;
        (column.target as ColumnEncoder).setIds(firstRow + done, present === count ? ids : spreadIds(ids, defined!, count));
      } else if (encoding === 'PLAIN') {
        const values = readPlain(page, column.type, present);
        const cells = present === count ? values : values instanceof Float64Array ? spreadNumbers(values, defined!, count) : spreadCells(values, defined!, count);
        column.target.setValues(firstRow + done, cells, 0, count, undefined, true);
      } else throw new Error(`a data page is ${encoding}-encoded, which its column chunk's metadata does not list`);
      done += count;
    }
  } finally {
    // The rows counted per index so far go to the column's counts (also before a failure, so the next chunk starts clean).
    decoder.endDictionary();
  }
}

/** A failure reading a column chunk (`group`: 0-based row group) as an `invalid_input` error naming the column and row group. */
export function chunkFailure(path: string, name: string, group: number, error: unknown): CrosstabError {
  if (error instanceof CrosstabError) return error;
  const hint = 'Check that the file is a complete Parquet file (not truncated or damaged); write it again if in doubt.';
  return inputError(path, `column "${name}", row group ${group + 1}: ${error instanceof Error ? error.message : String(error)}`, hint, { field: name });
}

/** A weight column's dictionary-encoded rows (-1: blank, which the encoder refuses). */
function storeWeights(target: WeightEncoder, start: number, words: ArrayLike<CellValue>, indices: Int32Array, count: number): void {
  if (words instanceof Float64Array) {
    // A numeric weight: numbers (NaN for a blank row, which the encoder refuses as blank), not an array of cells.
    const numbers = new Float64Array(count);
    for (let k = 0; k < count; k++) {
      const index = indices[k]!;
      if (index >= words.length) throw new Error(`dictionary index ${index} is past the dictionary's ${words.length} values`);
      numbers[k] = index < 0 ? Number.NaN : words[index]!;
    }
    return target.setValues(start, numbers, 0, count);
  }
  const cells: CellValue[] = new Array(count);
  for (let k = 0; k < count; k++) {
    const index = indices[k]!;
    if (index >= words.length) throw new Error(`dictionary index ${index} is past the dictionary's ${words.length} values`);
    cells[k] = index < 0 ? null : words[index];
  }
  target.setValues(start, cells, 0, count);
}

function decompress(bytes: Uint8Array, size: number, meta: ColumnMetaData): Uint8Array {
  if (meta.codec === 'UNCOMPRESSED') return bytes;
  const decompressor = decompressors[meta.codec];
  if (decompressor === undefined) throw new Error(`the ${meta.codec} decoder was not loaded (codecsReady)`);
  const page = decompressor(bytes, size);
  if (page.length !== size) throw new Error(`a ${meta.codec} page decompresses to ${page.length} bytes, not the ${size} its header says`);
  return page;
}
