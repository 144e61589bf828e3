import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { CrosstabError, ErrorCode } from '../errors.js';
import { DEFAULT_TABBOOK_MAX_CELLS, tabbook } from '../report/tabbook.js';
import { normalizeStats, STAT_NAMES, type StatName } from '../report/statistics.js';
import { TABBOOK_FORMATS, TABBOOK_LAYOUTS } from '../report/tabbook-model.js';
import { formatOfPath, writeTabbook } from '../report/tabbook-output.js';
import { shorten } from '../text/expression-text.js';
import { expandTabbookAudiences, tabbookUsesAudiences } from '../report/tabbook-audiences.js';
import { audiencesFromDatabase, audiencesFromFile } from './audience-source.js';
import { databaseOption } from './database-option.js';
import { openCompiled } from './open-compiled.js';

/** The library's field names, as this command's flags. */
const FLAGS: Record<string, string> = { banner: '--banner', columnGroups: '--column-group', stubs: '--stubs', base: '--base', weight: '--weight', stats: '--stats', missing: '--missing', maxCells: '--max-cells', format: '--format', layout: '--layout', out: '--out' };

/**
 * Registers `crosstab tabbook <dataset>`: one banner across many stub tables, written as an
 * XLSX workbook (index sheet, one sheet per table or one long sheet), HTML, CSV or JSON.
 * See docs/tabbooks.md.
 */
export function registerTabbookCommand(program: Command): void {
  const command = program
    .command('tabbook')
    .description('a tab book: one banner across many stub tables, as XLSX, HTML, CSV or JSON')
    .argument('<dataset>', 'dataset file from `crosstab build`')
    .requiredOption('--banner <list>', 'comma list of banner variables (one column per value), codebook codes or expressions (one column each; an expression with a comma in parentheses)')
    .requiredOption('--stubs <list>', 'comma list of stub variables (one table each), or all')
    .requiredOption('--out <file>', 'the file to write')
    .option('--column-group <indexes>', 'compare these banner columns, which may share respondents: 0-based column indexes, comma list (repeat for more groups)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--base <expr>', 'population base of every table', '*')
    .option('--stats <list>', `all, or a comma list of ${STAT_NAMES.join(',')}`, 'vpct,sig')
    .option('--missing <show|hide>', 'show or hide the "No answer" rows and columns', 'show')
    .option('--format <format>', `${TABBOOK_FORMATS.join(', ')} (default: from --out's extension, else xlsx)`)
    .option('--layout <layout>', 'xlsx: sheets (one sheet per table) or long (all tables on one sheet)', 'sheets')
    .option('--weight <column>', "weight column (default: the dataset's first)")
    .option('--unweighted', 'count respondents with weight 1')
    .option('--execution <where>', 'auto, inline (calling thread) or pool (worker threads)', 'pool')
    .option('--max-cells <n>', `most cells of the whole book (every stub's rows x the banner's columns), refused before any table starts (default ${DEFAULT_TABBOOK_MAX_CELLS})`)
    .option('--audiences <file>', '@name in --banner and --base: saved audiences from a file of name=expression lines')
    .option('--account <name>', "@name in --banner and --base: the account's shared audiences in the access database (--database)")
    .option('--user <email>', "with --account: that user's private audiences too")
    .addHelpText(
      'after',
      `
Examples:
  $ crosstab tabbook gss.arrow --banner sex,race,degree --stubs all --out book.xlsx
  $ crosstab tabbook gss.arrow --banner sex,race --stubs degree,relig,polviews --base 'year=2024' --layout long --out book.xlsx
  $ crosstab tabbook gss.arrow --banner sex,race --stubs degree,relig --out book.html
  $ crosstab tabbook gss.arrow --banner 'sex,age=18..34,age=35..,(degree=3,4)' --column-group 2,3 --stubs relig --out book.xlsx
  $ crosstab tabbook gss.arrow --audiences audiences.txt --banner 'sex,@graduates' --base '@adults' --stubs relig --out book.xlsx
  $ crosstab tabbook gss.arrow --database .crosstab/db --account acme --banner 'sex,@graduates' --stubs relig --out book.xlsx`,
    )
    .action(async (path: string, flags: Record<string, unknown>) => {
      const settings = await readFlags(flags);
      const ds = await openCompiled(path, { execution: settings.execution });
      try {
        const { banner, base } = await withAudiences(settings, flags, ds.info.survey);
        const book = await relabel(() =>
          tabbook(ds, {
            banner,
            ...(settings.columnGroups !== undefined ? { columnGroups: settings.columnGroups } : {}),
            stubs: settings.stubs,
            base,
            stats: settings.stats,
            missing: settings.missing,
            ...(settings.maxCells !== undefined ? { maxCells: settings.maxCells } : {}),
            ...(settings.weight !== undefined ? { weight: settings.weight } : {}),
          }),
        );
        const written = await relabel(() => writeTabbook(book, settings.out, { format: settings.format, layout: settings.layout }));
        const layout = written.format === 'xlsx' ? `, ${written.layout}` : '';
        process.stderr.write(`wrote ${settings.out} (${written.format}${layout}, ${book.tables.length} tables)\n`);
      } finally {
        await ds.close();
      }
    });
  databaseOption(command);
}

/**
 * The banner and base with their `@name`s expanded from --audiences or --account (read only
 * when one is used); an `@name` without either is refused, saying where audiences come from.
 */
async function withAudiences(settings: { banner: string[]; base: string }, flags: Record<string, unknown>, survey: string): Promise<{ banner: string[]; base: string }> {
  const file = flags['audiences'] as string | undefined;
  const account = flags['account'] as string | undefined;
  const user = flags['user'] as string | undefined;
  if (file !== undefined && account !== undefined) throw flagError('--audiences', '--audiences and --account cannot be used together', 'Take the audiences from a file or from an account, not both.');
  if (user !== undefined && account === undefined) throw flagError('--user', '--user needs --account', 'Name the account the user belongs to: --account NAME --user EMAIL.');
  if (!tabbookUsesAudiences(settings)) return settings;
  const source =
    file !== undefined
      ? await audiencesFromFile(file)
      : account !== undefined
        ? await audiencesFromDatabase(flags['database'] as string | undefined, account, user, survey)
        : { lookup: () => undefined, hint: 'Saved audiences come from --audiences FILE (name=expression lines) or from an account: --database URL --account NAME.' };
  try {
    const expanded = expandTabbookAudiences(settings, source.lookup);
    return { banner: expanded.options.banner as string[], base: expanded.options.base ?? '*' };
  } catch (error) {
    if (!(error instanceof CrosstabError)) throw error;
    const flag = error.details.field === 'base' ? '--base' : '--banner';
    const problem = error.details.problem ?? error.message;
    throw new CrosstabError(error.code, `${flag}: ${problem}`, { ...error.details, field: flag, ...(error.code === ErrorCode.unknownAudience ? { hint: source.hint } : {}) });
  }
}

async function readFlags(flags: Record<string, unknown>) {
  const banner = bannerList(String(flags['banner']));
  const columnGroups = (flags['columnGroup'] as string[] | undefined)?.map((text) =>
    text.split(',').map((part) => {
      const index = Number(part.trim());
      if (part.trim() === '' || !Number.isInteger(index) || index < 0) {
        throw flagError('--column-group', `--column-group "${shorten(text)}": "${shorten(part)}" is not a column index`, 'Give 0-based banner column indexes, e.g. --column-group 0,1,2 (the JSON output numbers the columns the same way).');
      }
      return index;
    }),
  );
  const stubsText = String(flags['stubs']).trim();
  const stubs = stubsText === 'all' ? ('all' as const) : list(stubsText, '--stubs', 'e.g. --stubs degree,relig or --stubs all');
  const statsText = String(flags['stats']).trim();
  const stats: StatName[] = normalizeStats(statsText === 'all' ? 'all' : (statsText.split(',').map((name) => name.trim()) as StatName[]), '--stats', `e.g. --stats vpct,sig (all: ${STAT_NAMES.join(', ')})`);
  const missing = oneOf('--missing', flags['missing'], ['show', 'hide'] as const);
  const out = String(flags['out']);
  const format = flags['format'] === undefined ? formatOfPath(out) : oneOf('--format', flags['format'], TABBOOK_FORMATS);
  // A deck charts the vertical %: it is computed with whatever else is asked.
  if (format === 'pptx' && !stats.includes('vpct')) stats.splice(0, stats.length, ...normalizeStats([...stats, 'vpct'], '--stats'));
  const layout = oneOf('--layout', flags['layout'], TABBOOK_LAYOUTS);
  const execution = oneOf('--execution', flags['execution'], ['auto', 'inline', 'pool'] as const);
  if (flags['unweighted'] === true && flags['weight'] !== undefined) throw flagError('--unweighted', '--weight and --unweighted cannot be used together', 'Pass one of them.');
  const weight = flags['unweighted'] === true ? null : (flags['weight'] as string | undefined);
  const maxCellsText = flags['maxCells'] as string | undefined;
  const maxCells = maxCellsText === undefined ? undefined : Number(maxCellsText);
  if (maxCells !== undefined && (!/^\d+$/.test(maxCellsText!.trim()) || !Number.isSafeInteger(maxCells) || maxCells < 1)) {
    throw flagError('--max-cells', `--max-cells must be a whole number of cells, at least 1; got "${shorten(maxCellsText!)}"`, `e.g. --max-cells 1000000 (default ${DEFAULT_TABBOOK_MAX_CELLS}).`);
  }
  // Before any table is computed: a folder that cannot take the file fails now, not after the tables.
  try {
    await access(dirname(resolve(out)), constants.W_OK);
  } catch (error) {
    throw flagError('--out', `--out ${out}: cannot write there: ${(error as Error).message}`, 'Pass a file path in a folder that exists and that you may write to.');
  }
  return { banner, columnGroups, stubs, base: String(flags['base']), stats, missing, maxCells, out, format, layout, execution, weight };
}

/**
 * `--banner`: a comma list whose items are variables, codes or expressions. A comma inside
 * parentheses or quotes belongs to its item, so `sex,(degree=3,4),"two words"=1` is three
 * items; parentheses around a whole item are kept (the expression reads the same).
 */
function bannerList(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quote !== undefined) {
      if (char === '\\') i++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === '(') depth++;
    else if (char === ')') depth = Math.max(0, depth - 1);
    else if (char === ',' && depth === 0) {
      items.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  items.push(text.slice(start).trim());
  if (items.some((item) => item === '')) {
    throw flagError('--banner', `--banner must be a comma list without empty items; got "${shorten(text)}"`, "e.g. --banner sex,race,degree or --banner 'sex,age=18..34,(degree=3,4)'");
  }
  return items;
}

function list(text: string, flag: string, hint: string): string[] {
  const items = text.split(',').map((item) => item.trim());
  if (items.length === 0 || items.some((item) => item === '')) throw flagError(flag, `${flag} must be a comma list of names without empty items; got "${shorten(text)}"`, hint);
  return items;
}

function oneOf<T extends string>(flag: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) throw flagError(flag, `${flag} must be ${allowed.join(', ')}; not "${String(value)}"`, `e.g. ${flag} ${allowed[0]}`);
  return value as T;
}

function flagError(flag: string, message: string, hint: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidOption, message, { field: flag, hint });
}

/** Runs a library call; an error naming one of its fields (`stubs[2]`, `base`) is re-labelled with the flag. */
async function relabel<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof CrosstabError) || typeof error.details.field !== 'string') throw error;
    const name = /^[a-z]+/i.exec(error.details.field)?.[0] ?? '';
    const flag = FLAGS[name];
    if (flag === undefined) throw error;
    // The library's limit option, named in its problem and hint, is this flag here.
    const asFlag = (text: string) => (name === 'maxCells' ? text.replaceAll('maxCells', flag) : text);
    const problem = asFlag(error.details.problem ?? error.message);
    const hint = typeof error.details.hint === 'string' ? { hint: asFlag(error.details.hint) } : {};
    throw new CrosstabError(error.code, `${flag}: ${problem}`, { ...error.details, ...hint, field: flag });
  }
}
