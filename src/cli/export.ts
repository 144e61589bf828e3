import type { Command } from 'commander';
import { exportColumns } from '../facade/export-columns.js';
import { formatNumber } from '../text/number-text.js';

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description('write columns of a dataset (id, weights, variables) to CSV or Parquet in the input\'s row order')
    .argument('<dataset>', 'dataset file from `crosstab build` (or `crosstab weight`)')
    .requiredOption('--columns <names>', 'comma-separated columns: the --id column, weights, variables, _row (input row number)', (value: string) => value.split(',').map((name) => name.trim()).filter(Boolean))
    .requiredOption('--out <file>', 'file to write: .csv or .parquet')
    .action(async (path: string, flags: { columns: string[]; out: string }) => {
      const report = await exportColumns(path, { columns: flags.columns, out: flags.out });
      process.stderr.write(`${report.out}: ${formatNumber(report.rows, 0)} rows x ${report.columns.length} columns (${report.format}, ${formatNumber(report.bytes / 1e6)} MB), in the input's row order\n`);
    });
}
