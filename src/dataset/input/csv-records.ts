import { Writable } from 'node:stream';
import type { CsvError, Parser } from 'csv-parse';

const LF = 0x0a;
const BOM = [0xef, 0xbb, 0xbf];

type CsvParse = typeof import('csv-parse');
/** csv-parse once loaded: at the first input that needs it, since survey exports seldom do (nine modules fewer at the start of a read). */
let csvParse: CsvParse | undefined;

async function loadCsvParse(): Promise<CsvParse> {
  return (csvParse ??= await import('csv-parse'));
}

/** Whether `error` is csv-parse's (never while csv-parse is not loaded: it threw none). */
export function isCsvError(error: unknown): error is CsvError {
  return csvParse !== undefined && error instanceof csvParse.CsvError;
}

/**
 * csv-parse as this reader configures it: any of the three line endings ends a record, so
 * a file mixing LF and CRLF cannot leave a stray '\r' in values; field counts are checked
 * by the caller, which knows physical line numbers.
 */
function csvParser(module: CsvParse): Parser {
  return module.parse({ bom: true, relax_column_count: true, record_delimiter: ['\r\n', '\n', '\r'] });
}

/**
 * Splits CSV bytes into records, handing each to `onRecord`. The fast path takes lines
 * without quotes or carriage returns, which is how survey exports are written: it decodes
 * a chunk's complete lines as one string and splits it with the engine's native split,
 * several times faster than a character-by-character parser. At the first line holding a
 * quote or a '\r' (quoted fields, embedded newlines, CRLF or CR endings) the rest of the
 * input goes to csv-parse, starting at that record boundary, so the records are exactly
 * what csv-parse alone gives (test/csv-records.test.ts checks this on random CSVs).
 */
export class CsvRecords extends Writable {
  /** Bytes after the last line feed of the previous chunk. */
  private leftover: Buffer | undefined;
  private fallback: Parser | undefined;
  private started = false;
  /** Physical lines the fast path consumed: csv-parse's line numbers start after them. */
  private lines = 0;

  constructor(
    /** `plain`: the record came from one line without quotes (it holds no line break). */
    private readonly onRecord: (record: string[], plain: boolean) => void,
    /** false: csv-parse from the first byte (the reference the fast path is tested against). */
    private readonly fastPath = true,
  ) {
    super({ highWaterMark: 1 << 18 });
  }

  /** True once csv-parse reads the rest of the input (a quote or '\r' was seen). */
  get diverted(): boolean {
    return this.fallback !== undefined;
  }

  /** True once the header line (the first record) has been handed over. */
  get pastFirstLine(): boolean {
    return this.lines > 0;
  }

  /** Counts `lines` plain lines another reader consumed, so csv-parse's line numbers stay right. */
  skipLines(lines: number): void {
    this.lines += lines;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.fallback) return void this.fallback.write(chunk, done);
    try {
      let data = this.leftover ? Buffer.concat([this.leftover, chunk]) : chunk;
      this.leftover = undefined;
      if (!this.started) {
        if (!this.fastPath) {
          this.started = true;
          return this.switchToParser(data, done);
        }
        // A BOM may be cut across the first chunks: wait for three bytes.
        if (data.byteLength < BOM.length) {
          this.leftover = Buffer.from(data);
          return done();
        }
        this.started = true;
        if (data[0] === BOM[0] && data[1] === BOM[1] && data[2] === BOM[2]) data = data.subarray(3);
      }
      const end = data.lastIndexOf(LF);
      if (end < 0) {
        this.leftover = Buffer.from(data);
        return done();
      }
      // Never inside a UTF-8 sequence: 0x0a is no continuation byte.
      const text = data.toString('utf8', 0, end);
      const special = firstSpecial(text);
      if (special < 0) {
        this.splitLines(text);
        this.leftover = Buffer.from(data.subarray(end + 1));
        return done();
      }
      const lineStart = text.lastIndexOf('\n', special) + 1;
      if (lineStart > 0) this.splitLines(text.slice(0, lineStart - 1));
      this.switchToParser(data.subarray(Buffer.byteLength(text.slice(0, lineStart))), done);
    } catch (error) {
      done(error as Error);
    }
  }

  override _final(done: (error?: Error | null) => void): void {
    try {
      const rest = this.leftover;
      this.leftover = undefined;
      if (!this.fallback && rest !== undefined && rest.byteLength > 0) {
        // Fewer than three bytes in all: csv-parse takes them (a BOM or not).
        if (!this.started) return this.switchToParser(rest, () => this.endParser(done));
        const text = rest.toString('utf8');
        if (firstSpecial(text) >= 0) return this.switchToParser(rest, () => this.endParser(done));
        this.onRecord(text.split(','), true);
      }
      this.endParser(done);
    } catch (error) {
      done(error as Error);
    }
  }

  private endParser(done: (error?: Error | null) => void): void {
    const parser = this.fallback;
    if (!parser) return done();
    parser.once('end', () => done());
    parser.end();
  }

  private splitLines(text: string): void {
    const lines = text.split('\n');
    for (const line of lines) this.onRecord(line.split(','), true);
    this.lines += lines.length;
  }

  /** Hands the rest of the input, from `bytes` on, to csv-parse (loaded first if need be); `done` once `bytes` are taken. */
  private switchToParser(bytes: Buffer, done: (error?: Error | null) => void): void {
    if (csvParse === undefined) return void loadCsvParse().then(() => this.switchToParser(bytes, done), done);
    const parser = (this.fallback = csvParser(csvParse));
    parser.on('data', (record: string[]) => {
      try {
        this.onRecord(record, false);
      } catch (error) {
        parser.destroy(error as Error);
      }
    });
    parser.on('error', (error: Error) => {
      if (isCsvError(error) && typeof error.lines === 'number') error.lines += this.lines;
      this.destroy(error);
    });
    if (bytes.byteLength === 0) return done();
    parser.write(bytes, done);
  }
}

/** Index of the first quote or carriage return, or -1. */
function firstSpecial(text: string): number {
  const quote = text.indexOf('"');
  const cr = text.indexOf('\r');
  return quote < 0 ? cr : cr < 0 ? quote : Math.min(quote, cr);
}
