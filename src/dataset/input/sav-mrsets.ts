import type { MultiSpec } from './raw-table.js';

/**
 * An SPSS multiple-response set as its dictionary stores it (extension records 7 and 19,
 * written by the MRSETS command): one line per set, bytes counted in the file's encoding:
 *   `$cover=D1 1 15 Health coverage hicov privcov pubcov` (dichotomies, counted value "1")
 *   `$brands=C 13 Brands bought brand1 brand2` (categories)
 *   `$x=E 1 1 1 5 Label a b` / `E 11 ...` (extended dichotomies, record 19)
 * Variable names are the dictionary's short names.
 */
export interface SavMultiSet {
  name: string;
  label: string;
  /** Dichotomy sets: the counted value as text. */
  counted?: string;
  variables: string[];
}

/** The sets of one record's bytes; a malformed line throws a message naming it. */
export function parseMultiSets(data: Uint8Array, decode: (bytes: Uint8Array) => string): SavMultiSet[] {
  const sets: SavMultiSet[] = [];
  let at = 0;
  const space = 0x20;
  while (at < data.length) {
    let end = data.indexOf(0x0a, at);
    if (end < 0) end = data.length;
    const line = data.subarray(at, end);
    at = end + 1;
    if (line.every((byte) => byte === space || byte === 0)) continue;
    const equals = line.indexOf(0x3d);
    if (equals <= 0) throw new Error(`a multiple-response set line without "=": ${decode(line)}`);
    const name = decode(line.subarray(0, equals)).trim();
    let pos = equals + 1;
    const fail = (what: string): never => {
      throw new Error(`multiple-response set ${name}: ${what}`);
    };
    const skipSpaces = () => {
      while (pos < line.length && line[pos] === space) pos++;
    };
    const number = (): number => {
      skipSpaces();
      const start = pos;
      while (pos < line.length && line[pos]! >= 0x30 && line[pos]! <= 0x39) pos++;
      if (pos === start) fail('a length is missing');
      return Number(decode(line.subarray(start, pos)));
    };
    /** A length, one space, then that many bytes. */
    const counted = (): string => {
      const length = number();
      if (line[pos] !== space) fail('a space is missing after a length');
      pos++;
      if (pos + length > line.length) fail('a value runs past the end of its line');
      const text = decode(line.subarray(pos, pos + length));
      pos += length;
      return text;
    };
    const type = String.fromCharCode(line[pos++] ?? 0);
    let countedValue: string | undefined;
    if (type === 'D') countedValue = counted();
    else if (type === 'E') {
      number(); // 1: categories labelled by variable labels; 11: by counted values
      countedValue = counted();
    } else if (type !== 'C') fail(`unknown set type "${type}"`);
    const label = counted();
    const variables = decode(line.subarray(pos)).split(/\s+/).filter((part) => part !== '');
    if (variables.length === 0) fail('lists no variables');
    const set: SavMultiSet = { name, label, variables };
    if (countedValue !== undefined) set.counted = countedValue.trim();
    sets.push(set);
  }
  return sets;
}

/** A set as a multi-response variable to build, its variables by their (long) column names. */
export function multiSpecOf(set: SavMultiSet, columnName: (shortName: string) => string | undefined, path: string): MultiSpec {
  const columns = set.variables.map((shortName) => columnName(shortName) ?? shortName);
  const spec: MultiSpec = { name: set.name, columns, from: path };
  if (set.label !== '') spec.label = set.label;
  if (set.counted !== undefined) spec.counted = set.counted;
  return spec;
}
