/** The build pipeline: read the input, compile, declare the design, check the codebook's codes, write atomically. */
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CrosstabError, ErrorCode, throwIfCancelled } from '../errors.js';
import { defaultBuildThreads, PARALLEL_BUILD_MIN_ROWS } from '../dataset/input/build-threads.js';
import { readCodebook } from '../dataset/build/codebook.js';
import { compileDataset, type CompiledDataset } from '../dataset/build/compile.js';
import { multiSpecs } from '../dataset/build/multi-specs.js';
import { checkReplicateOptions, declareDesign } from '../dataset/build/design.js';
import { BUILD_CANCELLED_HINT, BufferKind, type StoredVariable } from '../dataset/format.js';
import type { readInput } from '../dataset/input/read-input.js';
import { Resolver } from '../query/resolve.js';
import { nameText } from '../text/expression-text.js';
import { invalidOption } from '../options.js';
import { type BuildOptions, type BuildReport, refuseOutOverInput, validateBuildOptions } from './build-options.js';
import { appendTrace } from './append-trace.js';

/**
 * Compiles a file of respondents (CSV or gzip'd CSV, SPSS .sav/.zsav, Parquet, Arrow IPC;
 * told apart by their first bytes) into a dataset file. Writes to a temporary
 * file and renames, so a failed or cancelled build leaves nothing behind.
 */
export async function buildDataset(input: string, options: BuildOptions): Promise<BuildReport> {
  const trace = appendTrace(process.env, 'buildDataset');
  trace?.mark('start (node, modules)');
  try {
    return await build(input, options, trace);
  } finally {
    trace?.done();
  }
}

async function build(input: string, options: BuildOptions, trace: ReturnType<typeof appendTrace>): Promise<BuildReport> {
  const checked = validateBuildOptions(options);
  const { signal } = checked;
  const cancelled = () => throwIfCancelled(signal, 'the build', BUILD_CANCELLED_HINT);
  cancelled();
  await stat(dirname(checked.out)).catch(() => {
    throw invalidOption('out', `"${checked.out}": the folder ${dirname(checked.out)} does not exist`, 'Create the folder or choose another path.');
  });
  await refuseOutOverInput(checked.out, [[input, 'the input'], ...(checked.codebook === undefined ? [] : [[checked.codebook, 'the codebook'] as const])]);
  // A replicate declaration that cannot stand whatever the data is refused before the read.
  if (checked.design) checkReplicateOptions(checked.design);
  const codebook = checked.codebook === undefined ? undefined : await readCodebook(checked.codebook);
  // Replicate weights are read, checked and stored as extra weight vectors.
  const replicateWeights = checked.design?.replicateWeights ?? [];
  const readOptions: Parameters<typeof readInput>[1] = { weights: [...checked.weights, ...replicateWeights.filter((w) => !checked.weights.includes(w))] };
  if (checked.exclude) readOptions.exclude = checked.exclude;
  if (checked.threads !== undefined) readOptions.threads = checked.threads;
  // A column the build will skip as id-like need not be read to its end; columns read row by row are read whole.
  readOptions.skipIdLike = { except: [...(checked.id === undefined ? [] : [checked.id]), ...(checked.multi ?? []).map((entry) => entry.column), ...(codebook?.multi ?? []).flatMap((entry) => entry.columns)] };
  const { onProgress } = checked;
  // Readers report progress now and then: that is where a cancelled read stops.
  if (signal !== undefined) {
    readOptions.onProgress = (done, total) => {
      cancelled();
      onProgress?.(done, total);
    };
  } else if (onProgress) readOptions.onProgress = onProgress;
  // The input readers and the writer (csv-parse, hyparquet, apache-arrow) load on first
  // build, not with the package: opening a built dataset and querying it never needs them.
  const { readInput: read } = await import('../dataset/input/read-input.js');
  trace?.mark('load the input reader');
  const table = await read(input, readOptions);
  trace?.mark('read the input', `${table.rows} rows, ${table.columns.length} columns`);
  cancelled();

  const multi = multiSpecs(table, codebook, checked.codebook, checked.multi ?? []);
  if (codebook) {
    const columns = new Set([...table.columns.map((column) => column.name), ...multi.map((spec) => spec.name)]);
    for (const name of Object.keys(codebook.variables)) {
      if (!columns.has(name)) {
        throw new CrosstabError(ErrorCode.invalidCodebook, `${checked.codebook}: variable "${name}" is not a column of ${input}`, {
          file: checked.codebook,
          field: name,
          hint: 'Remove it from the codebook or fix its name.',
        });
      }
    }
  }
  const compiled = compileDataset(table, {
    survey: checked.survey,
    name: checked.name ?? checked.survey,
    units: checked.units ?? 1,
    ...(checked.stability ? { stability: checked.stability } : {}),
    ...(codebook ? { codebook } : {}),
    ...(multi.length > 0 ? { multi } : {}),
    rangeIndex: checked.rangeIndex === undefined || checked.rangeIndex === 'auto' ? 'auto' : checked.rangeIndex === 'none' ? [] : checked.rangeIndex,
    ...(checked.id === undefined ? {} : { id: checked.id }),
    consume: true,
    threads: checked.threads ?? (table.rows >= PARALLEL_BUILD_MIN_ROWS ? defaultBuildThreads() : 0),
  });
  if (checked.design) {
    const design = declareDesign(compiled.meta, checked.design, (variable) => compiled.inputRanks(variable.name), compiled.inputWeights);
    if (design) compiled.meta.design = design;
  }
  // Every named code must parse and bind now, not at the first query. (Without codes no
  // resolver: making one reads the values of every numeric variable.)
  const resolver = compiled.meta.codes.length > 0 ? new Resolver(compiled.meta) : undefined;
  for (const code of compiled.meta.codes) {
    try {
      // As an expression names it: a code named NOT is "NOT" (bare, NOT is the operator).
      resolver!.resolve(nameText(code.name));
    } catch (error) {
      const reason = error instanceof CrosstabError ? error.message : String(error);
      throw new CrosstabError(ErrorCode.invalidCodebook, `${checked.codebook}: code "${code.name}" (${code.expr}) is invalid: ${reason}`, {
        file: checked.codebook,
        field: code.name,
        hint: 'Fix the code\'s "expr" in the codebook.',
      });
    }
  }
  trace?.mark('plan', `${compiled.specs.length} buffers`);
  cancelled();
  const { writeDataset } = await import('../dataset/file/writer.js');
  // Past the page cache: through it, the copy into new cache pages and their writeback at the
  // fsync cost more CPU than any step of the build but the read; the workers run at most a few
  // variables ahead of the writer (makeBuffersInWorkers), so a slow device holds back only them.
  const written = await writeDataset(compiled, checked.out, signal, { direct: true });
  trace?.mark('make, write, sync, rename', `${written.bytes} bytes`);
  return {
    out: checked.out,
    respondents: compiled.meta.respondents,
    variables: compiled.meta.variables.length,
    codes: compiled.specs.filter((spec) => spec.name.startsWith('code:')).length,
    bytes: written.bytes,
    skipped: compiled.meta.skipped.map((entry) => ({ column: entry.column, reason: entry.reason })),
    notes: table.notes ?? [],
    checksum: written.checksum,
  };
}

export type { BuildOptions, BuildReport } from './build-options.js';
