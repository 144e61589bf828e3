import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { appendRows } from '../build/append.js';
import { ErrorCode, isCrosstabError } from '../errors.js';
import { formatNumber } from '../text/number-text.js';
import { reportError } from './output.js';

/** `crosstab append DATASET NEW_ROWS --out FILE`: a new wave added to a built dataset. */
export function registerAppendCommand(program: Command): void {
  program
    .command('append')
    .description("add a wave of respondents to a built dataset (same columns and weights), without the old respondents' input")
    .argument('<dataset>', 'the dataset (.arrow) to extend')
    .argument('<new-rows>', 'the new respondents: CSV (.csv/.csv.gz), SPSS (.sav/.zsav), Parquet or Arrow IPC file')
    .requiredOption('--out <path>', '(required) dataset file to write (may be <dataset> itself: written beside it and renamed over it)')
    .option('--threads <n>', 'worker threads reading the new rows (default: one per core, at most 4, for a CSV of 8 MiB or more, gzip\'d 2 MiB; for a smaller CSV 0: one thread)', (value: string) => {
      const number = Number(value);
      if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError(`--threads must be a whole number, not "${value}"`);
      return number;
    })
    .option('--compact', 'write one file of all the respondents, every buffer extended (default: the wave is added to the file as a segment of its own)')
    .option('--drop-calibrated', 'leave out the weights `crosstab weight` made (they need weighting again over every respondent; without this flag such a dataset is refused)')
    .option('--quiet', 'print nothing but errors')
    .addHelpText(
      'after',
      `
The new values of a variable join its dictionary; a numeric variable given text, a column
the dataset does not have, or one of its columns missing is refused. The result answers
every query as a build of all the rows would. A weight made by \`crosstab weight\` (calibrated
to targets over the old respondents) cannot be extended: such a dataset is refused, or with
--drop-calibrated the weight is left out and the command that makes it again is printed. A running \`crosstab serve\` takes it up on
SIGHUP, or by itself with --watch, when it is renamed over the file it serves.

The wave is written as a segment of the file: the old file is copied as it is (by the
file system, not read), and only the wave's buffers are made and written, so the time
grows with the wave, not the dataset. The buffers are put together from their segments
when read, each part checked against its own checksum. Past 8 segments, for a wave larger
than the dataset, or with --compact, the whole file is written again in one segment (an
earlier version of crosstab reads only such a file).

Example:
  $ crosstab append tracker.arrow wave-12.csv --out tracker.arrow`,
    )
    .action(async (dataset: string, newRows: string, flags: { out: string; threads?: number; quiet?: boolean; dropCalibrated?: boolean; compact?: boolean }) => {
      const started = performance.now();
      const interrupt = new AbortController();
      const cancel = () => interrupt.abort();
      process.once('SIGINT', cancel);
      process.once('SIGTERM', cancel);
      try {
        const report = await appendRows(dataset, newRows, { out: flags.out, signal: interrupt.signal, ...(flags.threads === undefined ? {} : { threads: flags.threads }), ...(flags.dropCalibrated === true ? { dropCalibrated: true } : {}), ...(flags.compact === true ? { compact: true } : {}) });
        if (!flags.quiet) {
          for (const note of report.notes) process.stderr.write(`note: ${note}\n`);
          for (const { variable, values } of report.newValues) {
            const shown = values.length > 10 ? `${values.slice(0, 10).join(', ')} and ${values.length - 10} more` : values.join(', ');
            process.stderr.write(`note: new values of ${variable}: ${shown}\n`);
          }
          for (const { weight, command } of report.dropped) process.stderr.write(`note: weight ${weight} left out (made by crosstab weight for the old respondents); make it again with: ${command}\n`);
          const seconds = ((performance.now() - started) / 1000).toFixed(1);
          process.stderr.write(`appended ${formatNumber(report.appended, 0)} respondents: ${report.out} has ${formatNumber(report.respondents, 0)}${report.segments > 1 ? ` in ${report.segments} segments` : ''}, ${formatNumber(report.bytes / 1e6)} MB in ${seconds} s (checksum ${report.checksum.slice(0, 12)})\n`);
        }
      } catch (error) {
        if (!(isCrosstabError(error) && error.code === ErrorCode.cancelled && interrupt.signal.aborted)) throw error;
        reportError(error);
        process.exit(130);
      } finally {
        process.removeListener('SIGINT', cancel);
        process.removeListener('SIGTERM', cancel);
      }
    });
}
