import { parseMultiSets, type SavMultiSet } from './sav-mrsets.js';
import { TextDecoder } from 'node:util';
import type { ByteCursor } from './byte-cursor.js';
import { inputError } from './table-encoder.js';

/**
 * The dictionary of an SPSS system file (.sav / .zsav): file header and every record up to
 * the dictionary termination record, following the format as documented by GNU PSPP
 * ("System File Format" in the PSPP developers guide).
 */

export interface SavVariable {
  /** Long name when the file has one (record 7.13), else the 8-byte short name. */
  name: string;
  /** 0 = numeric, else string width in bytes. */
  width: number;
  /** First 8-byte slot of the case. */
  slot: number;
  /** Where a string's bytes are: one segment, or several for a very long string (> 255 bytes). */
  segments: Array<{ slot: number; bytes: number }>;
  /** Print format type (5 = F, 20 = DATE, 22 = DATETIME...). */
  format: number;
  label?: string;
  /** User-missing values: numbers (discrete and an inclusive range) or string values. */
  missing: { values: Array<number | string>; range?: [number, number] };
  /** Value labels, keyed by number (numeric) or by trimmed text (string). */
  valueLabels: Map<number | string, string>;
}

export interface SavDictionary {
  /** 0 none, 1 bytecode, 2 zlib blocks of bytecode. */
  compression: 0 | 1 | 2;
  bias: number;
  /** Cases the header announces, -1 when unknown. */
  cases: number;
  /** 8-byte slots per case. */
  slots: number;
  /** Per slot: 1 when it holds a number. */
  numericSlots: Uint8Array;
  variables: SavVariable[];
  sysmis: number;
  encoding: string;
  /** Multiple-response sets (MRSETS), their variables by (long) name. */
  multiSets: SavMultiSet[];
}

interface VariableRecord {
  type: number;
  format: number;
  shortName: Uint8Array;
  label?: Uint8Array;
  missingCount: number;
  missing: Uint8Array;
}

interface Extension {
  subtype: number;
  data: Uint8Array;
  size: number;
}

/** Windows code pages and others seen in the machine integer info record. */
const codePages: Record<number, string> = { 2: 'us-ascii', 3: 'windows-1252', 65001: 'utf-8', 28591: 'iso-8859-1', 20127: 'us-ascii', 936: 'gbk', 932: 'shift_jis', 949: 'euc-kr', 950: 'big5' };

export async function readSavDictionary(cursor: ByteCursor): Promise<SavDictionary> {
  await cursor.need(176, 'the file header');
  const magic = String.fromCharCode(...cursor.bytes(4));
  cursor.bytes(60);
  const layout = cursor.int32();
  if (layout !== 2 && layout !== 3) cursor.littleEndian = false;
  cursor.int32(); // nominal case size: unreliable, the variable records say it
  const compression = cursor.int32();
  cursor.int32(); // weight index: the caller names its weights
  let cases = cursor.int32();
  const bias = cursor.float64();
  cursor.bytes(9 + 8 + 64 + 3);
  if (compression !== 0 && compression !== 1 && compression !== 2) throw corrupt(cursor, `unknown compression code ${compression} in the file header`);
  if ((compression === 2) !== (magic === '$FL3')) throw corrupt(cursor, `the header says ${magic} but compression code ${compression}`);

  const records: VariableRecord[] = [];
  const labelSets: Array<{ labels: Array<{ value: Uint8Array; label: Uint8Array }>; indexes: number[] }> = [];
  const extensions: Extension[] = [];
  for (;;) {
    await cursor.need(4, 'the dictionary');
    const type = cursor.int32();
    if (type === 999) {
      await cursor.need(4, 'the dictionary termination record');
      cursor.int32();
      break;
    }
    if (type === 2) records.push(await variableRecord(cursor));
    else if (type === 3) labelSets.push(await valueLabelRecord(cursor));
    else if (type === 6) {
      await cursor.need(4, 'a document record');
      const lines = cursor.int32();
      await cursor.need(lines * 80, 'a document record');
      cursor.bytes(lines * 80);
    } else if (type === 7) {
      await cursor.need(12, 'an extension record');
      const subtype = cursor.int32();
      const size = cursor.int32();
      const count = cursor.int32();
      await cursor.need(size * count, `extension record ${subtype}`);
      extensions.push({ subtype, size, data: cursor.bytes(size * count).slice() });
    } else throw corrupt(cursor, `unknown dictionary record type ${type} at byte ${cursor.offset - 4}`);
  }

  const info = (subtype: number) => extensions.find((extension) => extension.subtype === subtype);
  const view = (data: Uint8Array) => new DataView(data.buffer, data.byteOffset, data.byteLength);
  const integerInfo = info(3);
  const named = info(20);
  const codePage = integerInfo && integerInfo.data.length >= 32 ? view(integerInfo.data).getInt32(28, cursor.littleEndian) : 0;
  const encoding = named ? new TextDecoder('latin1').decode(named.data).trim().toLowerCase() : (codePages[codePage] ?? (codePage >= 1250 && codePage <= 1258 ? `windows-${codePage}` : 'windows-1252'));
  const decoder = textDecoder(cursor, encoding);
  const text = (bytes: Uint8Array) => decoder.decode(trimEnd(bytes));
  const floatInfo = info(4);
  const sysmis = floatInfo && floatInfo.data.length >= 8 ? view(floatInfo.data).getFloat64(0, cursor.littleEndian) : -Number.MAX_VALUE;
  const extendedCases = info(16);
  if (cases < 0 && extendedCases && extendedCases.data.length >= 16) cases = Number(view(extendedCases.data).getBigInt64(8, cursor.littleEndian));

  // Variables: a record per 8-byte slot; long strings continue over records of type -1.
  const numericSlots = new Uint8Array(records.length);
  const bySlot = new Map<number, SavVariable>();
  let variables: Array<SavVariable & { shortName: string }> = [];
  for (let slot = 0; slot < records.length; slot++) {
    const record = records[slot]!;
    if (record.type === -1) continue;
    const width = record.type;
    const slotCount = width === 0 ? 1 : Math.ceil(width / 8);
    for (let next = slot + 1; next < slot + slotCount; next++) {
      if (records[next]?.type !== -1) throw corrupt(cursor, `string variable ${text(record.shortName)} (width ${width}) lacks its continuation records`);
    }
    if (width === 0) numericSlots[slot] = 1;
    const variable = {
      shortName: text(record.shortName),
      name: text(record.shortName),
      width,
      slot,
      segments: width === 0 ? [] : [{ slot, bytes: width }],
      format: (record.format >> 16) & 0xff,
      missing: missingValues(record, width, cursor.littleEndian, text),
      valueLabels: new Map<number | string, string>(),
      ...(record.label ? { label: text(record.label) } : {}),
    };
    variables.push(variable);
    bySlot.set(slot, variable);
  }
  for (const { labels, indexes } of labelSets) {
    for (const index of indexes) {
      const variable = bySlot.get(index - 1);
      if (!variable) throw corrupt(cursor, `a value label record refers to variable index ${index}, which is not a variable`);
      for (const { value, label } of labels) {
        const key = variable.width === 0 ? view(value).getFloat64(0, cursor.littleEndian) : text(value);
        variable.valueLabels.set(key, text(label));
      }
    }
  }

  const long = info(13);
  if (long) {
    const renames = new Map(pairs(text(long.data)));
    for (const variable of variables) variable.name = renames.get(variable.shortName) ?? variable.name;
  }
  const veryLong = info(14);
  if (veryLong) variables = joinSegments(cursor, variables, pairs(text(veryLong.data).replace(/\0/g, '')));
  const byName = new Map(variables.map((variable) => [variable.name, variable]));
  const longLabels = info(21);
  if (longLabels) for (const [name, labels] of longStringLabels(longLabels.data, cursor.littleEndian, text)) byName.get(name)?.valueLabels.set(...labels);
  const longMissing = info(22);
  if (longMissing) for (const [name, value] of longStringMissing(longMissing.data, cursor.littleEndian, text)) byName.get(name)?.missing.values.push(value);

  const multiSets: SavMultiSet[] = [];
  for (const record of extensions.filter((extension) => extension.subtype === 7 || extension.subtype === 19)) {
    try {
      multiSets.push(...parseMultiSets(record.data, (bytes) => decoder.decode(bytes)));
    } catch (error) {
      throw corrupt(cursor, `has a malformed multiple-response set record: ${(error as Error).message}`);
    }
  }
  // Sets name variables by short name, in any case.
  const longName = new Map(variables.flatMap((variable) => [[variable.name.toUpperCase(), variable.name], [variable.shortName.toUpperCase(), variable.name]] as Array<[string, string]>));
  for (const set of multiSets) set.variables = set.variables.map((name) => longName.get(name.toUpperCase()) ?? name);

  return {
    compression,
    bias,
    cases,
    slots: records.length,
    numericSlots,
    variables: variables.map(({ shortName: _, ...variable }) => variable),
    sysmis,
    encoding,
    multiSets,
  };
}

async function variableRecord(cursor: ByteCursor): Promise<VariableRecord> {
  await cursor.need(28, 'a variable record');
  const type = cursor.int32();
  const hasLabel = cursor.int32();
  const missingCount = cursor.int32();
  const format = cursor.int32();
  cursor.int32(); // write format
  const shortName = cursor.bytes(8).slice();
  let label: Uint8Array | undefined;
  if (hasLabel === 1) {
    await cursor.need(4, 'a variable label');
    const length = cursor.int32();
    await cursor.need(Math.ceil(length / 4) * 4, 'a variable label');
    label = cursor.bytes(Math.ceil(length / 4) * 4).slice(0, length);
  }
  const missingBytes = Math.abs(missingCount) * 8;
  await cursor.need(missingBytes, 'missing values');
  return { type, format, shortName, missingCount, missing: cursor.bytes(missingBytes).slice(), ...(label ? { label } : {}) };
}

async function valueLabelRecord(cursor: ByteCursor) {
  await cursor.need(4, 'a value label record');
  const count = cursor.int32();
  const labels: Array<{ value: Uint8Array; label: Uint8Array }> = [];
  for (let i = 0; i < count; i++) {
    await cursor.need(9, 'a value label');
    const value = cursor.bytes(8).slice();
    const length = cursor.bytes(1)[0]!;
    const padded = Math.ceil((length + 1) / 8) * 8 - 1;
    await cursor.need(padded, 'a value label');
    labels.push({ value, label: cursor.bytes(padded).slice(0, length) });
  }
  await cursor.need(8, 'a value label variables record');
  if (cursor.int32() !== 4) throw corrupt(cursor, 'a value label record is not followed by its variables record (type 4)');
  const variables = cursor.int32();
  await cursor.need(variables * 4, 'a value label variables record');
  const indexes = Array.from({ length: variables }, () => cursor.int32());
  return { labels, indexes };
}

function missingValues(record: VariableRecord, width: number, littleEndian: boolean, text: (bytes: Uint8Array) => string): SavVariable['missing'] {
  const view = new DataView(record.missing.buffer, record.missing.byteOffset, record.missing.byteLength);
  const count = Math.abs(record.missingCount);
  const items = Array.from({ length: count }, (_, i) => (width === 0 ? view.getFloat64(i * 8, littleEndian) : text(record.missing.subarray(i * 8, i * 8 + 8))));
  if (record.missingCount >= 0 || width !== 0) return { values: items };
  return { values: items.slice(2), range: [items[0] as number, items[1] as number] };
}

/** Very long strings: the named variable and the segments after it become one variable. */
function joinSegments<T extends SavVariable & { shortName: string }>(cursor: ByteCursor, variables: T[], widths: Array<[string, string]>): T[] {
  const widthOf = new Map(widths.map(([name, width]) => [name, Number(width)]));
  const joined: T[] = [];
  for (let i = 0; i < variables.length; i++) {
    const variable = variables[i]!;
    const width = widthOf.get(variable.shortName);
    if (width === undefined || width <= 255) {
      joined.push(variable);
      continue;
    }
    const count = Math.ceil(width / 252);
    const segments = variables.slice(i, i + count);
    if (segments.length < count || segments.some((segment) => segment.width === 0)) {
      throw corrupt(cursor, `very long string ${variable.name} (width ${width}) lacks its ${count} string segments`);
    }
    // Each segment but the last holds 255 bytes of the value; the rest of its slots is unused.
    joined.push({ ...variable, width, segments: segments.map((segment) => ({ slot: segment.slot, bytes: Math.min(segment.width, 255) })) });
    i += count - 1;
  }
  return joined;
}

/** `KEY=VALUE` pairs separated by tabs (records 7.13 and 7.14). */
function pairs(text: string): Array<[string, string]> {
  return text
    .split('\t')
    .filter((pair) => pair.includes('='))
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)] as [string, string]);
}

function* longStringLabels(data: Uint8Array, littleEndian: boolean, text: (bytes: Uint8Array) => string): Generator<[string, [string, string]]> {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  const chunk = () => {
    const length = view.getInt32(at, littleEndian);
    const bytes = data.subarray(at + 4, at + 4 + length);
    at += 4 + length;
    return bytes;
  };
  while (at + 4 <= data.length) {
    const name = text(chunk());
    at += 4; // width
    const count = view.getInt32(at, littleEndian);
    at += 4;
    for (let i = 0; i < count; i++) {
      const value = text(chunk());
      yield [name, [value, text(chunk())]];
    }
  }
}

function* longStringMissing(data: Uint8Array, littleEndian: boolean, text: (bytes: Uint8Array) => string): Generator<[string, string]> {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  while (at + 4 <= data.length) {
    const nameLength = view.getInt32(at, littleEndian);
    const name = text(data.subarray(at + 4, at + 4 + nameLength));
    at += 4 + nameLength;
    const count = data[at]!;
    const valueLength = view.getInt32(at + 1, littleEndian);
    at += 5;
    for (let i = 0; i < count; i++, at += valueLength) yield [name, text(data.subarray(at, at + valueLength))];
  }
}

/** Drops trailing spaces (and NULs, which some writers pad with). */
export function trimEnd(bytes: Uint8Array): Uint8Array {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x20 || bytes[end - 1] === 0)) end--;
  return bytes.subarray(0, end);
}

function textDecoder(cursor: ByteCursor, encoding: string): TextDecoder {
  try {
    return new TextDecoder(encoding);
  } catch {
    throw inputError(cursor.file, `the SPSS file uses the character encoding "${encoding}", which this Node.js cannot decode`, 'Save the file again as UTF-8 (in SPSS: SET UNICODE=ON).');
  }
}

function corrupt(cursor: ByteCursor, what: string): Error {
  return inputError(cursor.file, `not a valid SPSS system file: ${what}`, 'Check that the file is an SPSS .sav or .zsav file and is complete; export it again if in doubt.');
}
