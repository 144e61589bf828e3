import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CrosstabError, ErrorCode } from '../errors.js';

const compiled = new Map<string, WebAssembly.Module>();

/** Finds build/<file> from wherever this code runs (src/ under tests, dist/ when built). */
function locate(file: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth++) {
    const candidate = join(dir, 'build', file);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new CrosstabError(ErrorCode.internal, `build/${file} not found next to crosstab-engine`, {
    hint: 'Run `npm run build:wasm` (npm install does it) to compile the AssemblyScript modules.',
  });
}

function module(file: string): WebAssembly.Module {
  let found = compiled.get(file);
  if (!found) compiled.set(file, (found = new WebAssembly.Module(readFileSync(locate(file)))));
  return found;
}

/** The compiled query kernel (assembly/index.ts), compiled once per thread. */
export function kernelModule(): WebAssembly.Module {
  return module('kernel.wasm');
}

/** The compiled CSV encoder of the build (assembly/csv.ts), compiled once per thread. */
export function csvEncoderModule(): WebAssembly.Module {
  return module('csv.wasm');
}

/** The compiled column builder of the build (assembly/columns.ts), compiled once per thread. */
export function columnsModule(): WebAssembly.Module {
  return module('columns.wasm');
}

/** The compiled Parquet page decoder of the build (assembly/parquet.ts), compiled once per thread. */
export function parquetDecoderModule(): WebAssembly.Module {
  return module('parquet.wasm');
}

/** Version of the CSV encoder's exports this code calls (csvAbi() in assembly/csv.ts). */
/**
 * A new instance of `module` (its own memory), its exports typed as `T`; an AssemblyScript
 * abort in it throws "`what` aborted".
 */
export function instantiate<T>(module: WebAssembly.Module, what: string): T {
  const instance = new WebAssembly.Instance(module, {
    env: {
      abort() {
        throw new Error(`${what} aborted`);
      },
    },
  });
  return instance.exports as unknown as T;
}

export const CSV_ENCODER_ABI = 2;
