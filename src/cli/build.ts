import type { Command } from 'commander';
import { rmSync } from 'node:fs';
import { SingleBar } from 'cli-progress';
import { buildDataset } from '../facade/build.js';
import { pendingOutputs } from '../dataset/writer.js';
import { formatNumber } from './output.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

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
    .option('--exclude <columns>', 'comma-separated columns to leave out', (value: string) => value.split(',').map((c) => c.trim()).filter(Boolean))
    .option('--unstable-max <n>', 'cells with this many respondents or fewer are unstable', (v: string) => Number(v), 60)
    .option('--very-unstable-max <n>', 'cells with this many respondents or fewer are very unstable', (v: string) => Number(v), 30)
    .option('--quiet', 'print nothing but errors')
    .addHelpText(
      'after',
      `
Examples:
  $ crosstab build survey.csv.gz --weight wtssps --survey GSS --out gss.arrow
  $ crosstab build people.sav --weight PWGTP --weight PWGTP1 --survey ACS --codebook acs.codebook.json --out acs.arrow`,
    )
    .action(async (input: string, flags) => {
      const started = performance.now();
      const showBar = process.stderr.isTTY && !flags.quiet;
      const bar = new SingleBar({ format: 'reading {bar} {percentage}% | {mb} of {totalMb} MB | {eta}s left', stream: process.stderr, clearOnComplete: true });
      let barStarted = false;
      const removePending = () => {
        for (const temp of pendingOutputs) rmSync(temp, { force: true });
        process.exit(130);
      };
      process.once('SIGINT', removePending);
      process.once('SIGTERM', removePending);
      try {
        const report = await buildDataset(input, {
          weights: flags.weight,
          survey: flags.survey,
          out: flags.out,
          units: flags.units,
          name: flags.name,
          codebook: flags.codebook,
          exclude: flags.exclude,
          stability: { cautionMax: flags.unstableMax, veryUnstableMax: flags.veryUnstableMax },
          onProgress: showBar
            ? (done, total) => {
                const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
                if (!barStarted) bar.start(total, 0, { mb: mb(done), totalMb: mb(total) });
                barStarted = true;
                bar.update(done, { mb: mb(done), totalMb: mb(total) });
              }
            : undefined,
        } as Parameters<typeof buildDataset>[1]);
        if (barStarted) bar.stop();
        if (!flags.quiet) {
          for (const { column, reason } of report.skipped) process.stderr.write(`note: column ${column} skipped (${reason})\n`);
          const seconds = ((performance.now() - started) / 1000).toFixed(1);
          process.stderr.write(
            `built ${report.out}: ${formatNumber(report.respondents, 0)} respondents, ${report.variables} variables, ${report.codes} value codes, ${formatNumber(report.bytes / 1e6)} MB in ${seconds} s\n`,
          );
        }
      } finally {
        if (barStarted) bar.stop();
        process.removeListener('SIGINT', removePending);
        process.removeListener('SIGTERM', removePending);
      }
    });
}
