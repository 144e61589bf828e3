import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CrosstabError, ErrorCode } from '../errors.js';

let compiled: WebAssembly.Module | undefined;

/** Finds build/kernel.wasm from wherever this code runs (src/ under tests, dist/ when built). */
function locateKernel(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth++) {
    const candidate = join(dir, 'build', 'kernel.wasm');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new CrosstabError(ErrorCode.internal, 'build/kernel.wasm not found next to crosstab-engine', {
    hint: 'Run `npm run build:wasm` (npm install does it) to compile the AssemblyScript kernel.',
  });
}

/** The compiled kernel module, compiled once per thread. */
export function kernelModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(readFileSync(locateKernel()));
  return compiled;
}
