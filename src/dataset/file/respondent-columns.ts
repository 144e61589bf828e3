import { CrosstabError, ErrorCode } from '../../errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import { BufferKind, type StoredVariable } from '../format.js';
import type { LoadedDataset } from './loaded-dataset.js';

/** A variable's value rank per respondent (1-based, 0 = blank), in respondent order. */
export type RankColumn = Uint8Array | Uint16Array | Uint32Array;

/**
 * A copy of `variable`'s index column (or with `copy: false` a view of kernel memory, as
 * {@link weightColumn}): its value rank per respondent, `meta.respondents`
 * long (checked against its hash on the way, as every query read is).
 */
export function rankColumn(dataset: LoadedDataset, kernel: Kernel, variable: StoredVariable, copy = true): RankColumn {
  if (variable.kind === 'multi') {
    throw new CrosstabError(ErrorCode.invalidOption, `variable "${variable.name}" is multi-response: a respondent may hold several of its values, so it has no one value per respondent here`, {
      field: variable.name,
      hint: 'Use a single-coded variable, or a code of the codebook built from it.',
    });
  }
  const buffer = dataset.buffer(variable.index);
  const n = dataset.meta.respondents;
  const width = buffer.kind === BufferKind.indexU8 ? 1 : buffer.kind === BufferKind.indexU16 ? 2 : 4;
  const view = kernel.memory.bytes(buffer.ptr, n * width);
  const bytes = copy ? view.slice() : view;
  return width === 1 ? bytes : width === 2 ? new Uint16Array(bytes.buffer, bytes.byteOffset, n) : new Uint32Array(bytes.buffer, bytes.byteOffset, n);
}

/**
 * A copy of a stored weight's values per respondent, `meta.respondents` long; with
 * `copy: false` a view of kernel memory instead, valid until the kernel allocates (load
 * every buffer a caller needs first, then take the views).
 */
export function weightColumn(dataset: LoadedDataset, kernel: Kernel, weight: string, copy = true): Float64Array {
  const stored = dataset.meta.weights.find((candidate) => candidate.name === weight);
  if (stored === undefined) throw new Error(`weightColumn: no weight ${weight}`);
  const buffer = dataset.buffer(stored.buffer);
  const view = kernel.memory.f64(buffer.ptr, dataset.meta.respondents);
  return copy ? view.slice() : view;
}
