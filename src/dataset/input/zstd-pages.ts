import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { decompress as fzstd } from 'fzstd';

/**
 * Zstandard pages of Parquet files decompressed by the zstd library itself compiled to
 * WebAssembly (@bokuweb/zstd-wasm): about three times faster than fzstd, the JavaScript
 * decoder hyparquet-compressors uses, which remains the fallback (and names a malformed
 * frame). The WebAssembly module is loaded asynchronously once per thread ({@link zstdReady});
 * until then pages go to fzstd.
 *
 * The decoder is an instance of our own, made from the package's files, not the package's
 * shared one: its init() makes a new instance asynchronously and, once ready, points the
 * shared memory views at it while calls already bound keep running on the old one, so a
 * second init() in the thread (a host that uses the library, or this package loaded both as
 * import and as require) made later pages decode into the wrong memory: a build of a good
 * file gave other values, or refused it as damaged.
 */
interface ZstdInstance {
  init(wasm: Uint8Array): void;
  onRuntimeInitialized?: () => void;
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  _ZSTD_getFrameContentSize(src: number, size: number): number;
  _ZSTD_decompress(dst: number, capacity: number, src: number, size: number): number;
  _ZSTD_isError(code: number): number;
}

let wasmDecompress: ((input: Uint8Array, defaultSize: number) => Uint8Array) | undefined;
let loading: Promise<void> | undefined;

/** A private instance of the package's decoder: its Emscripten glue run in a scope of its own. */
async function privateInstance(): Promise<ZstdInstance> {
  const require = createRequire(import.meta.url);
  const folder = dirname(require.resolve('@bokuweb/zstd-wasm'));
  const [glue, wasm] = await Promise.all([readFile(join(folder, 'zstd.js'), 'utf8'), readFile(join(folder, 'zstd.wasm'))]);
  const exports: { Module?: ZstdInstance } = {};
  // The package's own glue, run once per thread for an instance no one else starts again.
  new Function('exports', 'require', glue)(exports, require);
  const instance = exports.Module!;
  await new Promise<void>((resolve) => {
    instance.onRuntimeInitialized = resolve;
    instance.init(wasm);
  });
  return instance;
}

/** The package's decompress(), on the private instance. */
function decompressWith(instance: ZstdInstance): (input: Uint8Array, defaultSize: number) => Uint8Array {
  return (input, defaultSize) => {
    const src = instance._malloc(input.byteLength);
    instance.HEAPU8.set(input, src);
    const contentSize = instance._ZSTD_getFrameContentSize(src, input.byteLength);
    const size = contentSize === -1 ? defaultSize : contentSize;
    if (size < 0) {
      instance._free(src);
      throw new Error('not a zstd frame');
    }
    const heap = instance._malloc(size);
    try {
      const written = instance._ZSTD_decompress(heap, size, src, input.byteLength);
      if (instance._ZSTD_isError(written)) throw new Error(`zstd error ${written}`);
      // HEAPU8 read after the calls: a malloc that grows the memory replaces the view.
      return instance.HEAPU8.slice(heap, heap + written);
    } finally {
      instance._free(heap);
      instance._free(src);
    }
  };
}

/** Loads the WebAssembly decoder in this thread (once). */
export function zstdReady(): Promise<void> {
  return (loading ??= (async () => {
    wasmDecompress = decompressWith(await privateInstance());
  })());
}

/**
 * One Zstandard page (`input`: its frames), `size` bytes as its header says: the caller
 * checks the length it gets (a frame that states its content size is decoded to that size).
 */
export function zstdPage(input: Uint8Array, size: number): Uint8Array {
  if (wasmDecompress !== undefined) {
    try {
      return wasmDecompress(input, Math.max(size, 1));
    } catch {
      // fzstd reads it again and says what is wrong with it.
    }
  }
  return fzstd(input);
}
