import { type Command, InvalidArgumentError } from 'commander';
import type { DesignOptions } from '../dataset/build/design.js';
import { buildDataset } from '../build/build.js';
import { ErrorCode, isCrosstabError } from '../errors.js';
import { formatNumber } from '../text/number-text.js';
import { reportError } from './output.js';
import { exampleSource } from './bundled.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** --range-index: `auto` (the default rule), `none`, or the columns to index. */
function rangeIndexFlag(value: string): string[] | 'auto' | 'none' {
  const trimmed = value.trim();
  if (trimmed === 'auto' || trimmed === 'none') return trimmed;
  return value.split(',').map((c) => c.trim()).filter(Boolean);
}

function parseNumber(flag: string) {
  return (value: string): number => {
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number)) throw new InvalidArgumentError(`${flag} must be a number, not "${value}"`);
    return number;
  };
}

function collectNumbers(value: string, previous: number[] = []): number[] {
  return [...previous, ...value.split(',').filter((part) => part.trim() !== '').map(parseNumber('--rscales'))];
}

/** The design flags as buildDataset's `design` option; undefined when none is given. */
function designOptions(flags: Record<string, unknown>): DesignOptions | undefined {
  const design: DesignOptions = {};
  if (flags.strata !== undefined) design.strata = flags.strata as string;
  if (flags.psu !== undefined) design.psu = flags.psu as string;
  if (flags.nest === true) design.nest = true;
  if (flags.fpc !== undefined) design.fpc = flags.fpc as string;
  if (flags.replicateWeights !== undefined) {
    design.replicateWeights = (flags.replicateWeights as string[]).flatMap((value) => value.split(',')).map((c) => c.trim()).filter(Boolean);
  }
  if (flags.replicateType !== undefined) design.replicateType = flags.replicateType as DesignOptions['replicateType'];
  if (flags.rho !== undefined) design.rho = flags.rho as number;
  if (flags.scale !== undefined) design.scale = flags.scale as number;
  if (flags.rscales !== undefined) design.rscales = flags.rscales as number[];
  if (flags.mse === true) design.mse = true;
  if (flags.degf !== undefined) design.degf = flags.degf as number;
  return Object.keys(design).length > 0 ? design : undefined;
}

/** `COL` or `COL:DELIM` (split at the last ":"; a name holding ":" is written with its delimiter, `a:b:;`). */
function multiColumn(value: string): { column: string; delimiter?: string } {
  const at = value.lastIndexOf(':');
  if (at <= 0) return { column: value };
  const delimiter = value.slice(at + 1);
  if (delimiter === '') throw new InvalidArgumentError(`--multi ${value}: the delimiter after ":" is empty; write COLUMN or COLUMN:DELIMITER (e.g. brands:;)`);
  return { column: value.slice(0, at), delimiter };
}

export function registerBuildCommand(program: Command): void {
  program
    .command('build')
    .description('compile a file of respondents into a dataset (.arrow)')
    .argument('<input>', 'CSV (.csv/.csv.gz), SPSS (.sav/.zsav), Parquet or Arrow IPC file')
    .requiredOption('--weight <column>', '(required) weight column (repeat for more; the first is the default)', collect)
    .requiredOption('--survey <code>', '(required) survey code (SurveyCode in the REST API)')
    .requiredOption('--out <path>', '(required) dataset file to write')
    .option('--units <n>', 'AudienceReportUnits (weighted sums are reported divided by this)', Number, 1)
    .option('--name <text>', 'human-readable dataset name')
    .option('--codebook <file>', 'codebook JSON: named codes, labels, authorization groups')
    .option('--id <column>', 'respondent id column: kept as given for `crosstab export` (unique, never blank), not a variable')
    .option('--exclude <columns>', 'comma-separated columns to leave out', (value: string) => value.split(',').map((c) => c.trim()).filter(Boolean))
    .option('--multi <column[:delimiter]>', 'a column of delimited value sets ("1;3;5") to build as a multi-response variable (repeat for more; default delimiter ;)', collect)
    .option('--range-index <columns>', 'comma-separated numeric columns to index for ranges (AGEP=18..34 then reads one or two stored bitsets; costs respondents/8 bytes per value); default: auto (numeric columns of 10-256 values filling half their span, fewest values first, within half the rest of the file); none: no range index', rangeIndexFlag)
    .option('--unstable-max <n>', 'cells with this many respondents or fewer are unstable', (v: string) => Number(v), 60)
    .option('--very-unstable-max <n>', 'cells with this many respondents or fewer are very unstable', (v: string) => Number(v), 30)
    .option('--strata <column>', 'design: stratum column (R svydesign strata)')
    .option('--psu <column>', 'design: primary sampling unit (cluster) column (R svydesign ids)')
    .option('--nest', 'design: PSU numbers restart within strata (R nest = TRUE)')
    .option('--fpc <column>', 'design: finite population correction, population PSUs per stratum or sampling fraction')
    .option('--replicate-weights <columns...>', 'design: replicate-weight columns (full weights, R combined.weights = TRUE)')
    .option('--replicate-type <type>', 'design: JK1, JKn, BRR, Fay, bootstrap or SDR (R svrepdesign type)')
    .option('--rho <r>', 'design: Fay coefficient (type Fay)', parseNumber('--rho'))
    .option('--scale <s>', 'design: replicate variance multiplier (default: as R svrepdesign for the type)', parseNumber('--scale'))
    .option('--rscales <values...>', 'design: per-replicate multipliers (required for JKn); commas or spaces', collectNumbers)
    .option('--mse', 'design: centre replicate deviations on the full-sample estimate (R mse = TRUE)')
    .option('--degf <n>', 'design: degrees of freedom of the replicate design, for tables of every respondent (default: rank of the replicate weights - 1; a --base that leaves respondents out recomputes them, as R\'s subset())', parseNumber('--degf'))
    .option('--threads <n>', 'worker threads of the build (0: build on one thread; default: one per core, at most 4, for large inputs)', parseNumber('--threads'))
    .option('--quiet', 'print nothing but errors')
    .addHelpText(
      'after',
      `
Examples:
  $ crosstab build ${exampleSource('gss').data} --weight wtssps --survey GSS --codebook ${exampleSource('gss').codebook} --out gss.arrow
  $ crosstab build ${exampleSource('nhanes').data} --weight WTMEC2YR --survey NHANES --strata SDMVSTRA --psu SDMVPSU --nest --codebook ${exampleSource('nhanes').codebook} --out nhanes.arrow`,
    )
    .action(async (input: string, flags) => {
      const started = performance.now();
      const showBar = process.stderr.isTTY && !flags.quiet;
      // cli-progress loads only for a bar on a terminal: a build run by a script or a pipe does without it (some 30 ms before the read starts).
      const bar = showBar ? new (await import('cli-progress')).SingleBar({ format: 'reading {bar} {percentage}% | {mb} of {totalMb} MB | {eta}s left', stream: process.stderr, clearOnComplete: true }) : undefined;
      let barStarted = false;
      // Ctrl-C (or a SIGTERM) cancels the build, which removes its partial output; a second Ctrl-C kills at once.
      const interrupt = new AbortController();
      const cancel = () => interrupt.abort();
      process.once('SIGINT', cancel);
      process.once('SIGTERM', cancel);
      try {
        const report = await buildDataset(input, {
          weights: flags.weight,
          survey: flags.survey,
          out: flags.out,
          units: flags.units,
          name: flags.name,
          codebook: flags.codebook,
          exclude: flags.exclude,
          ...(flags.id === undefined ? {} : { id: flags.id }),
          multi: (flags.multi as string[] | undefined)?.map(multiColumn),
          rangeIndex: flags.rangeIndex,
          threads: flags.threads,
          design: designOptions(flags),
          stability: { cautionMax: flags.unstableMax, veryUnstableMax: flags.veryUnstableMax },
          signal: interrupt.signal,
          onProgress: showBar
            ? (done, total) => {
                const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
                if (!barStarted) bar!.start(total, 0, { mb: mb(done), totalMb: mb(total) });
                barStarted = true;
                bar!.update(done, { mb: mb(done), totalMb: mb(total) });
              }
            : undefined,
        } as Parameters<typeof buildDataset>[1]);
        if (barStarted) bar?.stop();
        if (!flags.quiet) {
          for (const note of report.notes) process.stderr.write(`note: ${note}\n`);
          for (const { column, reason } of report.skipped) process.stderr.write(`note: column ${column} skipped (${reason})\n`);
          const seconds = ((performance.now() - started) / 1000).toFixed(1);
          process.stderr.write(
            `built ${report.out}: ${formatNumber(report.respondents, 0)} respondents, ${report.variables} variables, ${report.codes} value codes, ${formatNumber(report.bytes / 1e6)} MB in ${seconds} s\n`,
          );
        }
      } catch (error) {
        if (barStarted) bar?.stop();
        if (!(isCrosstabError(error) && error.code === ErrorCode.cancelled && interrupt.signal.aborted)) throw error;
        reportError(error);
        process.exit(130);
      } finally {
        if (barStarted) bar?.stop();
        process.removeListener('SIGINT', cancel);
        process.removeListener('SIGTERM', cancel);
      }
    });
}
