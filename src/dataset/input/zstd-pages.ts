import { compressors } from 'hyparquet-compressors';

/**
 * Zstandard pages of Parquet files decompressed by the zstd library itself compiled to
 * WebAssembly (@bokuweb/zstd-wasm): about three times faster than fzstd, the JavaScript
 * decoder of hyparquet-compressors, which remains the fallback (and names a malformed
 * frame). The WebAssembly module is loaded asynchronously once per thread ({@link zstdReady});
 * until then pages go to fzstd.
 */
let wasmDecompress: ((input: Uint8Array, options: { defaultHeapSize: number }) => Uint8Array) | undefined;
let loading: Promise<void> | undefined;

/** Loads the WebAssembly decoder in this thread (once). */
export function zstdReady(): Promise<void> {
  return (loading ??= (async () => {
    const zstd = await import('@bokuweb/zstd-wasm');
    await zstd.init();
    wasmDecompress = zstd.decompress;
  })());
}

/**
 * One Zstandard page (`input`: its frames), `size` bytes as its header says: the caller
 * checks the length it gets (a frame that states its content size is decoded to that size).
 */
export function zstdPage(input: Uint8Array, size: number): Uint8Array {
  if (wasmDecompress !== undefined) {
    try {
      return wasmDecompress(input, { defaultHeapSize: Math.max(size, 1) });
    } catch {
      // fzstd reads it again and says what is wrong with it.
    }
  }
  return compressors.ZSTD!(input, size);
}
