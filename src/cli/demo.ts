import type { Command } from 'commander';
import { join } from 'node:path';
import { CrosstabError, ErrorCode } from '../errors.js';
import { openDataset } from '../facade/dataset.js';
import { bundledDatasetsHint, packageRoot } from './bundled.js';
import { formatTable } from './format-table.js';
import { formatNumber } from '../text/number-text.js';

const DEMO = { base: 'year=2024', targets: ['sex=2', 'degree=3..4', 'sex=2 AND degree=3..4', 'relig=4', 'polviews=1..3'] };

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('a crosstab on the bundled General Social Survey data')
    .action(async () => {
      const path = join(packageRoot(), 'datasets', 'build', 'gss.arrow');
      const ds = await openDataset(path).catch((error: unknown) => {
        if (error instanceof CrosstabError && error.code === ErrorCode.fileNotFound) {
          error.details.hint = bundledDatasetsHint();
        }
        throw error;
      });
      try {
        const started = performance.now();
        const result = await ds.crosstab(DEMO);
        const ms = (performance.now() - started).toFixed(2);
        const label = (expr: string) => ds.info.codes.find((code) => code.expr === expr)?.label ?? '';
        process.stdout.write(`${ds.info.name}: ${formatNumber(ds.info.respondents, 0)} respondents, weight ${result.weight}\n`);
        process.stdout.write(`base ${DEMO.base}: ${formatNumber(result.base.weighted)} weighted, ${formatNumber(result.base.respondents, 0)} respondents\n\n`);
        const rows = result.targets.map((cell, i) => [
          DEMO.targets[i]!,
          label(DEMO.targets[i]!),
          formatNumber(cell.weighted),
          formatNumber(cell.respondents, 0),
          `${formatNumber((100 * cell.weighted) / result.base.weighted)}%`,
          cell.stability,
        ]);
        process.stdout.write(`${formatTable(['target', 'label', 'weighted', 'respondents', '% of base', 'stability'], rows)}\n\n`);
        process.stdout.write(`answered in ${ms} ms. Try: npx crosstab query ${path} --base 'year=2024' --target 'sex=2' --json\n`);
      } finally {
        ds.close();
      }
    });
}
