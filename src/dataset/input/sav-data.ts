import { promisify } from 'node:util';
import { inflate } from 'node:zlib';
import type { ByteCursor } from './byte-cursor.js';
import type { SavDictionary } from './sav-dictionary.js';
import { inputError } from './table-encoder.js';

const inflateAsync = promisify(inflate);
const chunkBytes = 1 << 20;

/**
 * Reads the cases of an SPSS system file after its dictionary and hands each one to
 * `onCase` as `slots x 8` bytes laid out as in an uncompressed file (numbers as f64 in the
 * file's byte order, strings as space-padded bytes). The buffer is reused: copy what you
 * keep. Handles the three data layouts: uncompressed, bytecode-compressed and ZLIB blocks
 * of bytecode ($FL3 / .zsav). Returns the number of cases.
 */
export async function readSavCases(
  cursor: ByteCursor,
  dictionary: SavDictionary,
  onCase: (bytes: Uint8Array, view: DataView) => void,
  onProgress?: (doneBytes: number) => void,
): Promise<number> {
  const assembler = new CaseAssembler(dictionary, cursor.littleEndian, onCase);
  if (dictionary.compression === 2) {
    await readZlibBlocks(cursor, assembler, onProgress);
  } else {
    for (let chunk = await cursor.chunk(chunkBytes); chunk.length > 0 && !assembler.ended; chunk = await cursor.chunk(chunkBytes)) {
      if (dictionary.compression === 1) assembler.decode(chunk);
      else assembler.copy(chunk);
      onProgress?.(cursor.offset);
    }
  }
  if (assembler.partial) {
    throw cursor.truncated(`case ${assembler.cases + 1} of the data`);
  }
  if (dictionary.cases >= 0 && assembler.cases < dictionary.cases) {
    throw inputError(
      cursor.file,
      `the file holds ${assembler.cases} cases but its header announces ${dictionary.cases}: it is truncated`,
      'The file was cut short (an interrupted download or copy?): get or export the SPSS file again.',
      { cases: assembler.cases },
    );
  }
  return assembler.cases;
}

/** Rebuilds uncompressed cases from raw bytes or bytecode, keeping state across chunks. */
class CaseAssembler {
  cases = 0;
  ended = false;
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  private slot = 0;
  private readonly commands = new Uint8Array(8);
  private command = 8;
  /** Input bytes left over from the previous chunk (less than one command block + 8). */
  private carry = new Uint8Array(0);

  constructor(
    private readonly dictionary: SavDictionary,
    /** Numbers are written in the byte order the cases are read with: the file's. */
    private readonly littleEndian: boolean,
    private readonly onCase: (bytes: Uint8Array, view: DataView) => void,
  ) {
    this.bytes = new Uint8Array(dictionary.slots * 8);
    this.view = new DataView(this.bytes.buffer);
  }

  /** True when the input stopped inside a case. */
  get partial(): boolean {
    if (this.slot !== 0) return true;
    if (this.ended) return false;
    return this.carry.length > 0 || (this.command < 8 && this.commands.subarray(this.command).some((code) => code !== 0 && code !== 252));
  }

  /** Uncompressed data: 8-byte slots as they are. */
  copy(chunk: Uint8Array): void {
    const input = this.withCarry(chunk);
    let at = 0;
    for (; at + 8 <= input.length; at += 8) {
      this.bytes.set(input.subarray(at, at + 8), this.slot * 8);
      this.endSlot();
    }
    this.carry = input.slice(at);
  }

  /** Bytecode: blocks of 8 command bytes, each followed by the raw slots its 253s call for. */
  decode(chunk: Uint8Array): void {
    const input = this.withCarry(chunk);
    const { bias, numericSlots, sysmis } = this.dictionary;
    let at = 0;
    for (;;) {
      if (this.command === 8) {
        if (at + 8 > input.length) break;
        this.commands.set(input.subarray(at, at + 8));
        at += 8;
        this.command = 0;
      }
      const code = this.commands[this.command]!;
      const offset = this.slot * 8;
      if (code === 0) {
        this.command++;
        continue;
      }
      if (code === 252) {
        this.ended = true;
        this.command = 8;
        break;
      }
      if (code === 253) {
        if (at + 8 > input.length) break;
        this.bytes.set(input.subarray(at, at + 8), offset);
        at += 8;
      } else if (numericSlots[this.slot] === 1) {
        this.view.setFloat64(offset, code === 255 || code === 254 ? sysmis : code - bias, this.littleEndian);
      } else {
        // 254 = eight spaces; a number code in a string slot stands for NUL bytes.
        this.bytes.fill(code === 254 || code === 255 ? 0x20 : 0, offset, offset + 8);
      }
      this.command++;
      this.endSlot();
    }
    this.carry = input.slice(at);
  }

  private endSlot(): void {
    if (++this.slot < this.dictionary.slots) return;
    this.slot = 0;
    this.cases++;
    this.onCase(this.bytes, this.view);
  }

  private withCarry(chunk: Uint8Array): Uint8Array {
    if (this.carry.length === 0) return chunk;
    const joined = new Uint8Array(this.carry.length + chunk.length);
    joined.set(this.carry);
    joined.set(chunk, this.carry.length);
    return joined;
  }
}

/** ZLIB layout: a 24-byte header, zlib blocks of bytecode, and a trailer listing the blocks. */
async function readZlibBlocks(cursor: ByteCursor, assembler: CaseAssembler, onProgress?: (doneBytes: number) => void): Promise<void> {
  await cursor.need(24, 'the ZLIB data header');
  cursor.int64();
  const trailerOffset = cursor.int64();
  const trailerLength = cursor.int64();
  if (trailerOffset + trailerLength > cursor.size || trailerLength < 24) {
    throw inputError(
      cursor.file,
      `the file is ${cursor.size} bytes but its ZLIB trailer says it ends at byte ${trailerOffset + trailerLength}: it is truncated`,
      'The file was cut short (an interrupted download or copy?): get or export the SPSS file again.',
    );
  }
  cursor.seek(trailerOffset);
  await cursor.need(trailerLength, 'the ZLIB data trailer');
  cursor.int64();
  cursor.int64();
  cursor.int32();
  const blockCount = cursor.int32();
  if (blockCount * 24 + 24 > trailerLength) throw inputError(cursor.file, 'the ZLIB data trailer lists more blocks than it holds', 'Export the SPSS file again.');
  const blocks = Array.from({ length: blockCount }, () => {
    cursor.int64();
    const offset = cursor.int64();
    const uncompressed = cursor.int32();
    const compressed = cursor.int32();
    return { offset, uncompressed, compressed };
  });
  for (const [index, block] of blocks.entries()) {
    cursor.seek(block.offset);
    await cursor.need(block.compressed, `ZLIB block ${index + 1} of ${blockCount}`);
    const data = await inflateAsync(cursor.bytes(block.compressed)).catch((error: Error) => {
      throw inputError(cursor.file, `ZLIB block ${index + 1} of ${blockCount} is corrupt (${error.message})`, 'Export the SPSS file again.');
    });
    if (data.length !== block.uncompressed) {
      throw inputError(cursor.file, `ZLIB block ${index + 1} inflates to ${data.length} bytes, not the ${block.uncompressed} its trailer says`, 'Export the SPSS file again.');
    }
    assembler.decode(data);
    onProgress?.(block.offset + block.compressed);
    if (assembler.ended) break;
  }
}
