import type { Command } from 'commander';
import { openDataset } from '../facade/dataset.js';
import { formatTable } from './output.js';

export function registerInfoCommand(program: Command): void {
  program
    .command('info')
    .description('what a dataset holds: variables, values, codes, weights')
    .argument('<dataset>', 'dataset file from `crosstab build`')
    .option('--json', 'print the DatasetInfo object')
    .action(async (path: string, flags) => {
      const ds = await openDataset(path);
      try {
        const info = ds.info;
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
          return;
        }
        process.stdout.write(
          `${info.name} (survey ${info.survey}): ${info.respondents} respondents; weights ${info.weights.join(', ')}; units ${info.units}; ` +
            `unstable at <= ${info.stability.cautionMax} respondents\n` +
            `design: ${info.design.description}\n\n`,
        );
        const rows = info.variables.map((v) => [
          v.name,
          v.kind,
          v.group,
          String(v.distinct),
          String(v.missing),
          v.kind === 'numeric' ? `${v.min}..${v.max}` : (v.values ?? []).slice(0, 6).map((x) => x.value).join(',') + (v.distinct > 6 ? ',…' : ''),
          v.label ?? '',
        ]);
        process.stdout.write(`${formatTable(['variable', 'kind', 'group', 'values', 'blank', 'range / values', 'label'], rows)}\n`);
        if (info.codes.length > 0) {
          process.stdout.write(`\n${formatTable(['code', 'group', 'expression', 'label'], info.codes.map((c) => [c.name, c.group, c.expr, c.label ?? '']))}\n`);
        }
        for (const { column, reason } of info.skipped) process.stdout.write(`skipped at build: ${column} (${reason})\n`);
      } finally {
        ds.close();
      }
    });
}
