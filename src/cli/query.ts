import type { Command } from 'commander';
import { openCompiled } from './open-compiled.js';
import { toServiceResponse } from '../facade/service-shape.js';
import { formatNumber } from '../text/number-text.js';
import { terminalText } from '../text/terminal-text.js';
import { exampleDataset } from './bundled.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerQueryCommand(program: Command): void {
  program
    .command('query')
    .description('weighted audience of base AND each target')
    .argument('<dataset>', 'dataset file from `crosstab build`')
    .option('--base <expr>', 'population base expression', '*')
    .requiredOption('--target <expr>', '(required) target expression (repeat for more)', collect)
    .option('--weight <column>', 'weight column (default: the dataset\'s first)')
    .option('--unweighted', 'count respondents with weight 1')
    .option('--json', 'print the REST response body of POST /crosstab')
    .addHelpText(
      'after',
      `
Examples:
  $ crosstab query ${exampleDataset('gss')} --base 'year=2024' --target 'sex=Female' --target 'degree=3..4'
  $ crosstab query ${exampleDataset('gss')} --base 'year=2024' --target 'sex=Female' --json`,
    )
    .action(async (path: string, flags) => {
      const ds = await openCompiled(path);
      try {
        const result = await ds.crosstab({
          base: flags.base,
          targets: flags.target,
          ...(flags.unweighted ? { weight: null } : flags.weight !== undefined ? { weight: flags.weight } : {}),
        });
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(toServiceResponse(result))}\n`);
          return;
        }
        const { formatTable } = await import('./format-table.js');
        const share = (weighted: number) => (result.base.weighted > 0 ? `${formatNumber((100 * weighted) / result.base.weighted)}%` : '-');
        const rows = [
          ['(base) ' + flags.base, formatNumber(result.base.weighted / result.units), formatNumber(result.base.respondents, 0), '100.0%', result.base.stability],
          ...result.targets.map((cell, i) => [
            flags.target[i] as string,
            formatNumber(cell.weighted / result.units),
            formatNumber(cell.respondents, 0),
            share(cell.weighted),
            cell.stability,
          ]),
        ];
        process.stdout.write(`${terminalText(ds.info.name)} (${terminalText(ds.info.survey)}), weight ${result.weight ?? 'none'}, units ${result.units}\n`);
        process.stdout.write(`${formatTable(['target', 'weighted', 'respondents', '% of base', 'stability'], rows)}\n`);
      } finally {
        ds.close();
      }
    });
}
