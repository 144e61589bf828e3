import type { Command } from 'commander';
import type { VariableInfo } from '../facade/types.js';
import { openCompiled } from './open-compiled.js';
import { formatTable } from './format-table.js';
import { formatNumber } from '../text/number-text.js';
import { nameText, numberText, valueText } from '../text/expression-text.js';
import { terminalText } from '../text/terminal-text.js';

/**
 * The range of a numeric variable, or its first values with their codebook labels (1=Male),
 * each written as an expression reads it (numbers such as 1e-7, text values quoted where needed).
 */
function valuesText(variable: VariableInfo): string {
  const values = variable.values ?? [];
  const labelled = values.some((value) => value.label !== undefined);
  if ((variable.kind === 'numeric' || variable.multi?.numeric === true) && !labelled) return `${numberText(variable.min!)}..${numberText(variable.max!)}`;
  const shown = values.slice(0, 6).map((value) => (value.label === undefined ? valueText(value.value) : `${valueText(value.value)}=${value.label}`));
  return shown.join(', ') + (variable.distinct > 6 ? ', …' : '');
}

/** A multi-response variable with where it came from and every value as an expression (`cover=2`), its label and respondents. */
function multiText(variable: VariableInfo): string {
  const source = variable.multi!;
  const from = source.delimiter !== undefined
    ? `column ${nameText(source.columns[0]!)} split at ${JSON.stringify(source.delimiter)}`
    : `columns ${source.columns.map(nameText).join(', ')}${source.counted !== undefined ? ` counting ${valueText(source.counted)}` : ''}`;
  const rows = (variable.values ?? []).map((value) => [`${nameText(variable.name)}=${valueText(value.value)}`, value.label ?? '', formatNumber(value.respondents, 0)]);
  rows.push([`${nameText(variable.name)}=NA`, 'no answer', formatNumber(variable.missing, 0)]);
  return `${nameText(variable.name)}: multi-response, from ${from}${variable.label ? ` (${terminalText(variable.label)})` : ''}\n${formatTable(['value', 'label', 'respondents'], rows)}`;
}

export function registerInfoCommand(program: Command): void {
  program
    .command('info')
    .description('what a dataset holds: variables, values, codes, weights')
    .argument('<dataset>', 'dataset file from `crosstab build`')
    .option('--json', 'print the DatasetInfo object')
    .action(async (path: string, flags) => {
      const ds = await openCompiled(path);
      try {
        const info = ds.info;
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
          return;
        }
        process.stdout.write(
          `${terminalText(info.name)} (survey ${terminalText(info.survey)}): ${formatNumber(info.respondents, 0)} respondents; weights ${info.weights.join(', ')}; units ${info.units}; ` +
            `unstable at <= ${formatNumber(info.stability.cautionMax, 0)} respondents\n` +
            `design: ${info.design.description}\n` +
            `blank answers: shown in tables as "${terminalText(info.missingLabel)}" (VAR=NA); the "blank" column counts them\n` +
            (info.idColumn === undefined ? '' : `respondent ids: ${nameText(info.idColumn)} (kept as given for \`crosstab export\`; not a variable)\n`) +
            (info.weightsFile
              ? `weights file: ${info.weightsFile.file} adds ${info.weightsFile.weights.join(', ')} (written ${info.weightsFile.createdAt} for this build, dataset checksum ${info.weightsFile.datasetChecksum.slice(0, 12)})\n`
              : '') +
            '\n',
        );
        const rows = info.variables.map((v) => [
          nameText(v.name),
          v.kind,
          v.group,
          formatNumber(v.distinct, 0),
          formatNumber(v.missing, 0),
          valuesText(v),
          v.label ?? '',
        ]);
        process.stdout.write(`${formatTable(['variable', 'kind', 'group', 'values', 'blank', 'range / values', 'label'], rows)}\n`);
        if (info.codes.length > 0) {
          process.stdout.write(`\n${formatTable(['code', 'group', 'expression', 'label'], info.codes.map((c) => [nameText(c.name), c.group, c.expr, c.label ?? '']))}\n`);
        }
        const indexed = info.variables.filter((v) => v.rangeIndex === true);
        if (indexed.length > 0) process.stdout.write(`\nrange index (a range of values reads stored bitsets, no scan): ${indexed.map((v) => nameText(v.name)).join(', ')}\n`);
        const multi = info.variables.filter((v) => v.kind === 'multi');
        for (const v of multi) process.stdout.write(`\n${multiText(v)}\n`);
        for (const { column, reason } of info.skipped) process.stdout.write(`skipped at build: ${terminalText(column)} (${reason})\n`);
      } finally {
        ds.close();
      }
    });
}
