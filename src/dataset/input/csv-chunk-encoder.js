// The CSV encoder of a chunk of whole lines: encodes one share of the columns of every chunk
// with the WebAssembly encoder (assembly/csv.ts, build/csv.wasm) in a memory of its own.
// Each share owns some columns (src/dataset/input/csv-chunks.ts deals them out), so a
// column's dictionary lives in one encoder for the whole read and the ids it hands out are
// the table's ids: the reader copies them, and gets each new value once, as bytes. It runs
// in a CSV build worker (csv-worker.js), or on the reader's own thread for a smaller file
// (no worker to start). Plain JavaScript so that the same file runs under the test runner
// (from src/) and from the bundle (dist/).
//
// share: { module, abi, kinds: Uint8Array (a byte per column: 0 not mine, 1 dictionary,
//   2 weight), slots: Uint32Array (my dictionary or weight number per column), dictionaries,
//   weights }
// In:  { seq, chunk: Uint8Array, length }
// Out: { seq, complete, rows, ids: (Uint8Array | Uint16Array | Uint32Array)[], weights: Float64Array[],
//   fresh: { bytes: Uint8Array, lengths: Uint32Array }[] }
//   (complete: every line was encoded; otherwise the reader reads the chunk itself as text)
//   or { seq, error }; every array of it in memory of its own (not the encoder's).

/** The encoder of one share of the columns: a function from a chunk to its result (never throws). */
export function chunkEncoder(share) {
  const { module, abi, kinds, slots, dictionaries, weights: weightCount } = share;
  const csv = new WebAssembly.Instance(module, {
    env: {
      abort() {
        throw new Error('CSV encoder aborted');
      },
    },
  }).exports;
  const found = typeof csv.csvAbi === 'function' ? csv.csvAbi() : 0;
  const refused =
    found === abi
      ? undefined
      : `build/csv.wasm has CSV encoder ABI ${found}, this code expects ${abi}; the bundle and build/csv.wasm come from different builds: run \`npm run build\``;

  /** Weights as the JavaScript reader accepts them (WeightEncoder in table-encoder.ts). */
  const decimalNumber = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

  // A module of another ABI may lack the exports below: none is read from it.
  const columns = kinds.length;
  const listedBytes = refused ? 0 : csv.LISTED_WEIGHT_BYTES.value;
  const dictBytes = refused ? 0 : csv.DICT_BYTES.value;
  const stopEnd = refused ? 0 : csv.STOP_END.value;
  const kindsPtr = refused ? 0 : csv.allocate(columns);
  const slotsPtr = refused ? 0 : csv.allocate(columns * 4);
  const status = refused ? 0 : csv.allocate(csv.STATUS_BYTES.value);
  const dicts = refused ? 0 : csv.newDictionaries(dictionaries);
  /** Ids each dictionary had handed out before the current chunk. */
  const known = new Uint32Array(dictionaries);
  if (!refused) {
    new Uint8Array(csv.memory.buffer, kindsPtr, columns).set(kinds);
    new Uint32Array(csv.memory.buffer, slotsPtr, columns).set(slots);
  }

  // Buffers reused from chunk to chunk, reallocated (the old ones abandoned) when a chunk is larger.
  let source = 0;
  let sourceBytes = 0;
  let ids = 0;
  let weightsPtr = 0;
  let listed = 0;
  let rowCap = 0;
  let freshLengths = 0;
  let freshLengthsRoom = 0;

  function encode(seq, chunk, length) {
    const padded = Math.ceil(length / 64) * 64 + 64;
    if (padded > sourceBytes) {
      sourceBytes = padded * 2;
      source = csv.allocate(sourceBytes);
    }
    // A line holds at least `columns` bytes (its commas and '\n').
    const rowsAtMost = Math.floor(length / columns) + 1;
    if (rowsAtMost > rowCap) {
      rowCap = rowsAtMost * 2;
      ids = csv.allocate(Math.max(1, dictionaries) * rowCap * 4);
      weightsPtr = csv.allocate(Math.max(1, weightCount) * rowCap * 8);
      listed = csv.allocate(Math.max(1, weightCount) * rowCap * listedBytes);
    }
    const input = new Uint8Array(csv.memory.buffer, source, padded);
    input.set(chunk.subarray(0, length));
    input.fill(0, length);
    const rows = csv.encodeChunk(source, length, columns, kindsPtr, slotsPtr, dicts, ids, weightsPtr, rowCap, listed, status);
    // encodeChunk may have grown the memory: views are taken afterwards.
    const memory = csv.memory.buffer;
    const [, reason, , listedCount] = new Uint32Array(memory, status, 4);
    let complete = reason === stopEnd;
    const bytes = Buffer.from(memory);
    // Weights the encoder could not convert exactly: as the JavaScript reader converts them.
    const entries = new Uint32Array(memory, listed, (listedCount * listedBytes) / 4);
    const weights = new Float64Array(memory, weightsPtr, Math.max(1, weightCount) * rowCap);
    for (let i = 0; complete && i < listedCount; i++) {
      const [row, slot, , start, end] = entries.subarray((i * listedBytes) / 4, ((i + 1) * listedBytes) / 4);
      const text = bytes.toString('utf8', source + start, source + end);
      const value = decimalNumber.test(text) ? Number(text) : Number.NaN;
      // Not a weight: the main thread reads the chunk and names the problem.
      if (!(value >= 0 && value < Infinity)) complete = false;
      else weights[slot * rowCap + row] = value;
    }
    // Values new in this chunk, per dictionary: their bytes (one run) and lengths; the main
    // thread makes the strings (it waits for the workers anyway).
    const fresh = [];
    for (let d = 0; complete && d < dictionaries; d++) {
      const dict = dicts + d * dictBytes;
      const count = csv.dictionaryCount(dict);
      const lengths = new Uint32Array(count - known[d]);
      if (lengths.length > freshLengthsRoom) {
        freshLengthsRoom = lengths.length * 2;
        freshLengths = csv.allocate(freshLengthsRoom * 4);
      }
      const start = csv.dictionaryNewValues(dict, known[d] + 1, freshLengths);
      lengths.set(new Uint32Array(csv.memory.buffer, freshLengths, lengths.length));
      fresh.push({ bytes: new Uint8Array(csv.memory.buffer.slice(start, csv.dictionaryBytesEnd(dict))), lengths });
      known[d] = count;
    }
    if (!complete) return { seq, complete, rows: 0, ids: [], weights: [], fresh: [] };
    const idColumns = [];
    for (let d = 0; d < dictionaries; d++) {
      // In the narrowest array that holds the column's ids so far: most columns cross as one byte per row.
      const count = csv.dictionaryCount(dicts + d * dictBytes);
      const column = new (count <= 0xff ? Uint8Array : count <= 0xffff ? Uint16Array : Uint32Array)(rows);
      column.set(new Uint32Array(memory, ids + d * rowCap * 4, rows));
      idColumns.push(column);
    }
    const weightColumns = [];
    for (let w = 0; w < weightCount; w++) weightColumns.push(weights.slice(w * rowCap, w * rowCap + rows));
    return { seq, complete, rows, ids: idColumns, weights: weightColumns, fresh };
  }

  return ({ seq, chunk, length }) => {
    if (refused) return { seq, error: refused };
    try {
      return encode(seq, chunk, length);
    } catch (error) {
      return { seq, error: error instanceof Error ? error.message : String(error) };
    }
  };
}
