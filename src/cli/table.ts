import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CrosstabError, ErrorCode } from '../errors.js';
import type { Dataset } from '../facade/dataset.js';
import { openCompiled } from './open-compiled.js';
import type { AxisItem, MissingMode, PercentBase, TableResult } from '../facade/types.js';
import { LONELY_PSU, type LonelyPsu } from '../stats/design-variance.js';
import { CORRECTIONS, type Correction } from '../stats/significance.js';
import { STANDARD_ERROR_METHODS, type StandardErrorMethod } from '../stats/standard-error.js';
import { DOMAINS, type Domain } from '../report/design-figures.js';
import { normalizeStats, STAT_NAMES, type StatName } from '../report/statistics.js';
import { tableStatistics, type TableStatistics } from '../report/table-statistics.js';
import { tableToCSV } from '../report/table-csv.js';
import { tableToHTML } from '../report/table-html.js';
import { tableToJSON } from '../report/table-json.js';
import { tableToText } from '../report/table-text.js';
import { shorten } from '../text/expression-text.js';
import { exampleDataset } from './bundled.js';

const FORMATS = ['text', 'csv', 'json', 'arrow', 'html', 'xlsx', 'pptx'] as const;
const CHARTS = ['svg'] as const;
type Format = (typeof FORMATS)[number];

/** An axis flag value with its position on the command line, so --row and --rows keep their order. */
interface Ordered {
  order: number;
  flag: string;
  value: string;
}

let sequence = 0;
const collect = (flag: string) => (value: string, previous: Ordered[] = []) => [...previous, { order: sequence++, flag, value }];

/**
 * Registers `crosstab table <dataset>`: a weighted table of base AND row AND column
 * cells with derived statistics, printed as text, CSV, JSON, Arrow IPC or HTML.
 * See docs/tables.md.
 */
export function registerTableCommand(program: Command): void {
  program
    .command('table')
    .description('a weighted table of rows x columns with percentages, index, SE, significance')
    .argument('<dataset>', 'dataset file from `crosstab build`')
    .option('--base <expr>', 'population base expression', '*')
    .option('--row <expr>', 'a row expression (repeat for more)', collect('--row'))
    .option('--rows <variable>', 'one row per value of a variable (repeat for more)', collect('--rows'))
    .option('--column <expr>', 'a column expression (repeat for more)', collect('--column'))
    .option('--columns <variable>', 'one column per value of a variable (repeat for more)', collect('--columns'))
    .option('--column-group <indexes>', 'compare these columns, which may share respondents: 0-based column indexes, comma list (repeat for more groups)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--stats <list>', `all, or a comma list of ${STAT_NAMES.join(',')}`, 'vpct')
    .option('--se <method>', 'standard error: linearization (R svymean) or kish (effective base)', STANDARD_ERROR_METHODS[0])
    .option('--correction <method>', `multiple comparisons: ${orList(CORRECTIONS)}`, CORRECTIONS[0])
    .option('--alpha <level>', 'significance level of the column tests', '0.05')
    .option('--domain <n>', 'simple design: file (base as a domain of the whole file, R subset(); N = file respondents) or base (N = base respondents)', DOMAINS[0])
    .option('--lonely-psu <option>', `strata with one PSU: ${LONELY_PSU.join(', ')} (R survey.lonely.psu)`, LONELY_PSU[0])
    .option('--missing <mode>', 'show (default): a "No answer" entry per expanded variable with blanks in the base; hide: none', 'show')
    .option('--percent-base <base>', 'total (default): percentages of every base respondent; valid: of those who answered', 'total')
    .option('--execution <where>', 'auto, inline (calling thread) or pool (worker threads)', 'auto')
    .option('--weight <column>', "weight column (default: the dataset's first)")
    .option('--unweighted', 'count respondents with weight 1')
    .option('--format <format>', `output: ${FORMATS.join(', ')}`, 'text')
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--chart <kind>', 'write the chart of the table instead: svg (bars of the vertical % per banner column)')
    .addHelpText(
      'after',
      `
Examples:
  $ crosstab table ${exampleDataset('gss')} --rows sex --columns degree
  $ crosstab table ${exampleDataset('gss')} --base 'year=2024' --rows degree --columns sex --percent-base valid --missing hide
  $ crosstab table ${exampleDataset('gss')} --base 'year=2024' --rows race --column 'sex=Male' --column 'sex=Female' --stats vpct,index,sig --format html --out table.html
  $ crosstab table ${exampleDataset('gss')} --base 'year=2024' --rows degree --columns sex --chart svg --out chart.svg
  $ crosstab table ${exampleDataset('gss')} --base 'year=2024' --rows degree --columns sex,race --stats vpct,sig --format pptx --out table.pptx`,
    )
    .action(async (path: string, flags: Record<string, unknown>) => {
      const settings = readFlags(flags);
      const ds = await openCompiled(path, { execution: settings.execution });
      try {
        const result = await runTable(ds, settings);
        const statistics = withSeFlag(() =>
          tableStatistics(result, {
            stats: settings.stats,
            se: settings.se,
            correction: settings.correction,
            alpha: settings.alpha,
            domain: settings.domain,
            lonelyPsu: settings.lonelyPsu,
          }),
        );
        if (settings.chart === 'svg') {
          const { tableChart, chartToSVG } = await import('../report/table-chart.js');
          await emit(chartToSVG(tableChart(result, statistics, displayOf(ds))), settings.out, 'svg');
        } else if (settings.format === 'pptx') await writePPTX(ds, result, statistics, settings.out!);
        else if (settings.format === 'xlsx') await writeXLSX(ds, result, statistics, settings.out!);
        else await emit(await render(ds, result, statistics, settings.format), settings.out, settings.format);
      } finally {
        ds.close();
      }
    });
}

/** The pooled test's refusal (columns sharing respondents) names the flag that chose it, --se kish. */
function withSeFlag<T>(compute: () => T): T {
  try {
    return compute();
  } catch (error) {
    if (!(error instanceof CrosstabError) || error.details.field !== 'test') throw error;
    throw new CrosstabError(error.code, `--se kish: ${error.message}`, { ...error.details, field: '--se', hint: 'Drop --se kish: the linearization test accounts for the respondents in both columns.' });
  }
}

interface TableFlags {
  base: string;
  columnGroups: number[][] | undefined;
  rows: Ordered[];
  columns: Ordered[];
  stats: StatName[];
  se: StandardErrorMethod;
  correction: Correction;
  alpha: number;
  domain: Domain;
  lonelyPsu: LonelyPsu;
  missing: MissingMode;
  percentBase: PercentBase;
  execution: 'auto' | 'inline' | 'pool';
  weight: string | null | undefined;
  format: Format;
  chart: (typeof CHARTS)[number] | undefined;
  out: string | undefined;
}

function readFlags(flags: Record<string, unknown>): TableFlags {
  const byOrder = (a: Ordered, b: Ordered) => a.order - b.order;
  const rows = [...((flags['row'] as Ordered[]) ?? []), ...((flags['rows'] as Ordered[]) ?? [])].sort(byOrder);
  const columns = [...((flags['column'] as Ordered[]) ?? []), ...((flags['columns'] as Ordered[]) ?? [])].sort(byOrder);
  if (rows.length === 0) throw flagError('--row', 'no rows: give at least one --row EXPR or --rows VARIABLE', "e.g. --rows degree --row 'degree=3,4'");
  if (columns.length === 0) {
    throw flagError('--column', 'no columns: give at least one --column EXPR or --columns VARIABLE', "e.g. --columns sex --column 'age=18..34'");
  }
  const columnGroups = (flags['columnGroup'] as string[] | undefined)?.map((text) =>
    text.split(',').map((part) => {
      const index = Number(part.trim());
      if (part.trim() === '' || !Number.isInteger(index) || index < 0) {
        throw flagError('--column-group', `--column-group "${shorten(text)}": "${shorten(part)}" is not a column index`, 'Give 0-based column indexes, e.g. --column-group 0,1,2 (the JSON output numbers columns the same way).');
      }
      return index;
    }),
  );
  const chart = flags['chart'] === undefined ? undefined : oneOf('--chart', flags['chart'], CHARTS);
  const format = oneOf('--format', flags['format'], FORMATS);
  if (chart !== undefined && format !== 'text') {
    throw flagError('--chart', `--chart ${chart} writes the chart, not the table: it cannot be given with --format ${format}`, 'Pass one of them (run the command twice for both).');
  }
  // A chart and a deck show the vertical %: it is computed with whatever else is asked.
  const stats = chart !== undefined || format === 'pptx' ? normalizeStats([...readStats(String(flags['stats'])), 'vpct'], '--stats', '') : readStats(String(flags['stats']));
  const se = oneOf('--se', flags['se'], STANDARD_ERROR_METHODS);
  const correction = oneOf('--correction', flags['correction'], CORRECTIONS);
  const domain = oneOf('--domain', flags['domain'], DOMAINS);
  const lonelyPsu = oneOf('--lonely-psu', flags['lonelyPsu'], LONELY_PSU);
  const execution = oneOf('--execution', flags['execution'], ['auto', 'inline', 'pool'] as const);
  const missing = oneOf('--missing', flags['missing'], ['show', 'hide'] as const);
  const percentBase = oneOf('--percent-base', flags['percentBase'], ['total', 'valid'] as const);
  const alphaText = String(flags['alpha']);
  const alpha = Number(alphaText);
  if (alphaText.trim() === '' || !(alpha > 0 && alpha < 1)) {
    throw flagError('--alpha', `--alpha must be a number between 0 and 1 (exclusive), not "${alphaText}"`, 'e.g. --alpha 0.01');
  }
  if (flags['unweighted'] === true && flags['weight'] !== undefined) {
    throw flagError('--unweighted', '--weight and --unweighted cannot be used together', 'Pass one of them.');
  }
  const weight = flags['unweighted'] === true ? null : (flags['weight'] as string | undefined);
  const out = flags['out'] as string | undefined;
  if (format === 'arrow' && out === undefined && process.stdout.isTTY) {
    throw flagError('--format', '--format arrow writes binary Arrow IPC; not printing it to a terminal', 'Pass --out FILE or redirect stdout.');
  }
  if (format === 'xlsx' && out === undefined) {
    throw flagError('--format', '--format xlsx writes a workbook file; pass --out FILE.xlsx', 'e.g. --format xlsx --out table.xlsx');
  }
  if (format === 'pptx' && out === undefined) {
    throw flagError('--format', '--format pptx writes a PowerPoint file; pass --out FILE.pptx', 'e.g. --format pptx --out table.pptx');
  }
  return { base: String(flags['base']), columnGroups, rows, columns, stats, se, correction, alpha, domain, lonelyPsu, missing, percentBase, execution, weight, format, chart, out };
}

/** `--stats all` or a comma list, read by the registry's normalizeStats (names, order, near matches). */
function readStats(text: string): StatName[] {
  const names = text.trim() === 'all' ? 'all' : (text.split(',').map((name) => name.trim()) as StatName[]);
  return normalizeStats(names, '--stats', `e.g. --stats vpct,index,sig (all: ${STAT_NAMES.join(', ')})`);
}

function oneOf<T extends string>(flag: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) {
    throw flagError(flag, `${flag} must be ${allowed.join(', ')}; not "${String(value)}"`, `e.g. ${flag} ${allowed[0]}`);
  }
  return value as T;
}

/** `a, b or c`, for help texts. */
function orList(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}`;
}

function flagError(flag: string, message: string, hint: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidOption, message, { field: flag, hint });
}

/** Runs ds.table(); an error about rows[i] / columns[i] / base is re-labelled with the flag that gave it. */
async function runTable(ds: Dataset, flags: TableFlags): Promise<TableResult> {
  const axis = (entries: Ordered[]): AxisItem[] => entries.map((entry) => (entry.flag.endsWith('s') ? { variable: entry.value } : entry.value));
  try {
    return await ds.table({
      base: flags.base,
      rows: axis(flags.rows),
      columns: axis(flags.columns),
      missing: flags.missing,
      percentBase: flags.percentBase,
      ...(flags.columnGroups !== undefined ? { columnGroups: flags.columnGroups } : {}),
      ...(flags.weight !== undefined ? { weight: flags.weight } : {}),
    });
  } catch (error) {
    if (!(error instanceof CrosstabError) || typeof error.details.field !== 'string') throw error;
    const field = error.details.field;
    const match = /^(rows|columns)\[(\d+)\]$/.exec(field);
    const entry = match ? (match[1] === 'rows' ? flags.rows : flags.columns)[Number(match[2])] : undefined;
    // The flag's value is echoed cut short: a message never grows with the input.
    const shown = (value: string | null | undefined) => JSON.stringify(typeof value === 'string' ? shorten(value) : value);
    const flag = entry ? `${entry.flag} ${shown(entry.value)}` : field.startsWith('columnGroups') ? '--column-group' : field === 'base' ? `--base ${shown(flags.base)}` : field === 'weight' ? `--weight ${shown(flags.weight)}` : undefined;
    if (flag === undefined) throw error;
    const message = error.details.problem ?? error.message;
    throw new CrosstabError(error.code, `${flag}: ${message}`, { ...error.details, field: flag.split(' ')[0] });
  }
}

function displayOf(ds: Dataset) {
  return {
    title: ds.info.name === ds.info.survey ? ds.info.name : `${ds.info.name} (${ds.info.survey})`,
    variableLabels: Object.fromEntries(ds.info.variables.flatMap((variable) => (variable.label ? [[variable.name, variable.label]] : []))),
  };
}

/** The table as a one-sheet workbook, by the tab books' XLSX writer (exceljs loads only for this format). */
async function writeXLSX(ds: Dataset, result: TableResult, statistics: TableStatistics, out: string): Promise<void> {
  const [{ writeTableXLSX }, { writeStreamAtomically }] = await Promise.all([import('../report/tabbook-xlsx.js'), import('../report/atomic-file.js')]);
  await writeStreamAtomically(out, '--out', (stream) => writeTableXLSX(result, statistics, displayOf(ds), stream));
  process.stderr.write(`wrote ${out} (xlsx)\n`);
}

/** The table as a PowerPoint deck, a slide per row variable (pptxgenjs loads only for this format). */
async function writePPTX(ds: Dataset, result: TableResult, statistics: TableStatistics, out: string): Promise<void> {
  const [{ tablesToPPTX }, { writeStreamAtomically }] = await Promise.all([import('../report/table-pptx.js'), import('../report/atomic-file.js')]);
  const bytes = await tablesToPPTX([{ result, statistics, display: displayOf(ds) }]);
  await writeStreamAtomically(out, '--out', async (stream) => {
    stream.write(bytes);
  });
  process.stderr.write(`wrote ${out} (pptx, ${bytes.byteLength} bytes)\n`);
}

async function render(ds: Dataset, result: TableResult, statistics: TableStatistics, format: Exclude<Format, 'xlsx' | 'pptx'>): Promise<string | Uint8Array> {
  const display = displayOf(ds);
  switch (format) {
    case 'json':
      return `${JSON.stringify(tableToJSON(result, statistics))}\n`;
    case 'csv':
      return tableToCSV(result, statistics);
    case 'arrow':
      // apache-arrow loads only for this format.
      return (await import('../report/table-arrow.js')).tableToArrowIPC(result, statistics);
    case 'html':
      return tableToHTML(result, statistics, display);
    case 'text':
      return tableToText(result, statistics, display);
  }
}

async function emit(output: string | Uint8Array, out: string | undefined, format: Format | 'svg'): Promise<void> {
  if (out !== undefined) {
    try {
      await writeFile(out, output);
    } catch (error) {
      throw flagError('--out', `--out ${out}: cannot write the ${format} output: ${(error as Error).message}`, 'Pass a writable file path.');
    }
    process.stderr.write(`wrote ${out} (${format}, ${Buffer.byteLength(output)} bytes)\n`);
    return;
  }
  await new Promise<void>((resolve, reject) => process.stdout.write(output, (error) => (error ? reject(error) : resolve())));
}
