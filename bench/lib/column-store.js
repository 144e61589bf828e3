// Reads a gzip'd CSV (header row, comma separated, no quoting, empty = missing)
// into typed-array columns: the shared starting point of the JS peers.
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';

/** Sentinel for a missing integer cell (no ACS/GSS value is this small). */
export const MISSING = -2147483648;

const SKIP = 0, INT = 1, FLOAT = 2, TEXT = 3;
const KIND_CODE = { skip: SKIP, category: INT, numeric: INT, weight: FLOAT, float: FLOAT, text: TEXT };

/**
 * @param {{path:string, weight:string, rows:number, columns:Record<string,string>}} ds
 * @returns {Promise<ColumnStore>}
 */
export async function loadColumnStore(ds) {
  const stream = createReadStream(ds.path, { highWaterMark: 1 << 20 }).pipe(createGunzip({ chunkSize: 1 << 20 }));
  let header = null;
  let kinds, sinks, dictionaries, names;
  let capacity = Math.max(1024, (ds.rows ?? 0) + 1);
  let row = 0;
  let carry = null;

  const grow = () => {
    capacity *= 2;
    sinks = sinks.map((sink) => {
      if (!sink) return sink;
      const bigger = new sink.constructor(capacity);
      bigger.set(sink);
      return bigger;
    });
  };

  const setup = (line) => {
    names = line.split(',');
    for (const name of names) {
      if (!(name in ds.columns)) throw new Error(`bench: ${ds.path}: column '${name}' has no kind in bench/lib/datasets.js`);
    }
    kinds = Int8Array.from(names, (name) => KIND_CODE[ds.columns[name]]);
    sinks = names.map((name, i) => (kinds[i] === INT || kinds[i] === TEXT ? new Int32Array(capacity) : kinds[i] === FLOAT ? new Float64Array(capacity) : null));
    dictionaries = names.map((name, i) => (kinds[i] === TEXT ? new Map() : null));
  };

  // Parses complete lines in buf[0, end). Integers are parsed from bytes;
  // floats and text go through a latin1 slice (GSS floats, ACS STATE/PUMA).
  const parse = (buf, end) => {
    let pos = 0;
    const ncol = kinds.length;
    while (pos < end) {
      if (row === capacity) grow();
      for (let col = 0; col < ncol; col++) {
        const kind = kinds[col];
        const start = pos;
        if (kind === INT) {
          let value = 0, negative = false, digits = 0, byte = buf[pos];
          if (byte === 45) { negative = true; byte = buf[++pos]; }
          while (byte >= 48 && byte <= 57) { value = value * 10 + (byte - 48); digits++; byte = buf[++pos]; }
          if (byte !== 44 && byte !== 10 && byte !== 13) {
            throw new Error(`bench: ${ds.path}: row ${row + 2}, column ${names[col]}: '${buf.latin1Slice(start, Math.min(end, start + 20))}' is not an integer (declare it 'float' in bench/lib/datasets.js)`);
          }
          sinks[col][row] = digits === 0 ? MISSING : negative ? -value : value;
        } else {
          while (buf[pos] !== 44 && buf[pos] !== 10 && buf[pos] !== 13) pos++;
          if (kind === FLOAT) {
            sinks[col][row] = pos === start ? NaN : Number(buf.latin1Slice(start, pos));
          } else if (kind === TEXT) {
            if (pos === start) sinks[col][row] = MISSING;
            else {
              const text = buf.latin1Slice(start, pos);
              const dictionary = dictionaries[col];
              let code = dictionary.get(text);
              if (code === undefined) { code = dictionary.size; dictionary.set(text, code); }
              sinks[col][row] = code;
            }
          }
        }
        const sep = buf[pos];
        if (col < ncol - 1) {
          if (sep !== 44) throw new Error(`bench: ${ds.path}: row ${row + 2} has ${col + 1} fields, header has ${ncol}`);
          pos++;
        } else {
          if (sep === 13) pos++;
          if (buf[pos] !== 10) throw new Error(`bench: ${ds.path}: row ${row + 2} has more than ${ncol} fields`);
          pos++;
        }
      }
      row++;
    }
  };

  for await (const chunk of stream) {
    let buf = carry ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    if (!header) {
      const nl = buf.indexOf(10);
      if (nl < 0) { carry = buf; continue; }
      header = buf.latin1Slice(0, nl).replace(/\r$/, '');
      setup(header);
      start = nl + 1;
      buf = buf.subarray(start);
    }
    const lastNl = buf.lastIndexOf(10);
    if (lastNl < 0) { carry = buf; continue; }
    parse(buf, lastNl + 1);
    carry = lastNl + 1 < buf.length ? Buffer.from(buf.subarray(lastNl + 1)) : null;
  }
  if (carry && carry.length > 0) parse(Buffer.concat([carry, Buffer.from('\n')]), carry.length + 1);

  return new ColumnStore(ds, names, kinds, sinks, dictionaries, row);
}

export class ColumnStore {
  constructor(ds, names, kinds, sinks, dictionaries, rowCount) {
    this.dataset = ds.id;
    this.rowCount = rowCount;
    /** @type {Map<string, Column>} */
    this.columns = new Map();
    names.forEach((name, i) => {
      if (kinds[i] === SKIP) return;
      const kind = ds.columns[name];
      const values = sinks[i].subarray(0, rowCount);
      const dictionary = dictionaries[i] ? [...dictionaries[i].keys()] : null;
      this.columns.set(name, new Column(name, kind, values, dictionary));
    });
    const weight = this.columns.get(ds.weight);
    if (!weight) throw new Error(`bench: weight column ${ds.weight} missing from ${ds.path}`);
    /** Respondent weights as f64 (missing weight counts as 0). */
    this.weights = Float64Array.from(weight.values, (w) => (Number.isNaN(w) || w === MISSING ? 0 : w));
  }

  column(name) {
    const column = this.columns.get(name);
    if (!column) throw new Error(`bench: no column '${name}' in ${this.dataset}`);
    return column;
  }
}

export class Column {
  constructor(name, kind, values, dictionary) {
    this.name = name;
    this.kind = kind;
    this.values = values;
    this.dictionary = dictionary;
    this._distinct = null;
  }

  get isText() { return this.dictionary !== null; }

  /** The integer a CSV value is stored as (dictionary code for text), or null if never seen. */
  encode(value) {
    if (!this.isText) return typeof value === 'number' ? value : Number(value);
    const code = this.dictionary.indexOf(String(value));
    return code < 0 ? null : code;
  }

  /** Sorted distinct non-missing values as they appear in the CSV (numbers, or strings for text columns). */
  get distinct() {
    if (this._distinct) return this._distinct;
    if (this.isText) return (this._distinct = [...this.dictionary].sort());
    const values = this.values;
    if (values instanceof Float64Array) {
      return (this._distinct = [...new Set(values.filter((v) => !Number.isNaN(v)))].sort((a, b) => a - b));
    }
    let min = Infinity, max = -Infinity;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v === MISSING) continue;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    if (min > max) return (this._distinct = []);
    const seen = new Uint8Array(max - min + 1);
    for (let i = 0; i < values.length; i++) if (values[i] !== MISSING) seen[values[i] - min] = 1;
    const distinct = [];
    for (let k = 0; k < seen.length; k++) if (seen[k]) distinct.push(k + min);
    return (this._distinct = distinct);
  }
}
