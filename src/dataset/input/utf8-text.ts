/**
 * Text of UTF-8 bytes as typed files store it (Parquet BYTE_ARRAY, Arrow Utf8), one value at
 * a time. Malformed bytes read as U+FFFD, as a TextDecoder reads them. The strings are flat
 * strings of their own (no slices of a larger string).
 */
export class Utf8Text {
  private readonly buffer: Buffer;

  constructor(private readonly bytes: Uint8Array) {
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** The text of `bytes[start .. end - 1]`. */
  at(start: number, end: number): string {
    return shortAscii(this.bytes, start, end) ?? this.buffer.toString('utf8', start, end);
  }
}

/** Short ASCII text without a call into the runtime (survey codes are mostly that), else undefined. */
function shortAscii(bytes: Uint8Array, start: number, end: number): string | undefined {
  if (end - start > 12) return undefined;
  let text = '';
  for (let i = start; i < end; i++) {
    const code = bytes[i]!;
    if (code >= 0x80) return undefined;
    text += String.fromCharCode(code);
  }
  return text;
}
