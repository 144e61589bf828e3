/**
 * The Tables page's form and its spec: the body of a POST /tables request, built from the
 * form's fields and filled back into them (a saved table is stored as that body).
 */
import { parseExpression, STAT_NAMES, type StatName } from '../index.js';
import type { CatalogDataset } from '../http/survey-catalog.js';
import { quoteText, shorten } from '../text/expression-text.js';
import { suggest } from '../text/suggest.js';

/** An entry of Rows or Columns, as POST /tables takes it. */
export type SpecAxisItem = { Expression: string; Label?: string } | { Variable: string };

/** A POST /tables body as the page sends it. */
export interface TableSpec {
  SurveyCode: string;
  PopulationBaseCode: string;
  Rows: SpecAxisItem[];
  Columns: SpecAxisItem[];
  /** Absent: the survey's first weight; null: unweighted. */
  Weight?: string | null;
  Statistics: StatName[];
  Missing: 'show' | 'hide';
}

/** The expressions a spec holds: its base, then its rows' and columns' expression entries. */
export function expressionsOf(spec: TableSpec): string[] {
  return [spec.PopulationBaseCode, ...[...spec.Rows, ...spec.Columns].flatMap((item) => ('Variable' in item ? [] : [item.Expression]))];
}

/** The form's fields as text, as the page shows them. */
export interface TableForm {
  survey: string;
  base: string;
  rows: string;
  columns: string;
  /** A weight name, `""` for the survey's first, `-` for unweighted. */
  weight: string;
  statistics: StatName[];
  missing: 'show' | 'hide';
}

/** Statistics the heat map needs whatever is ticked: column percentages (its shading). */
export const ALWAYS_COMPUTED: readonly StatName[] = ['vpct'];
export const UNWEIGHTED = '-';

export const emptyForm = (survey: string): TableForm => ({ survey, base: '*', rows: '', columns: '', weight: '', statistics: ['vpct', 'sig'], missing: 'show' });

const lines = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');

/** The form as posted (missing fields as empty); the survey's default statistics when none is ticked is not assumed. */
export function formOf(fields: URLSearchParams): TableForm {
  const statistics = STAT_NAMES.filter((name) => fields.getAll('stat').includes(name));
  return {
    survey: fields.get('survey') ?? '',
    base: fields.get('base') ?? '',
    rows: fields.get('rows') ?? '',
    columns: fields.get('columns') ?? '',
    weight: fields.get('weight') ?? '',
    statistics,
    missing: fields.get('missing') === 'hide' ? 'hide' : 'show',
  };
}

/**
 * The POST /tables body of a form: one Rows or Columns entry per non-blank line, a line that
 * is a variable of the survey as a whole variable (one entry per value), any other line as an
 * expression. Only variables of `groups` (the user's) are taken as whole variables: another
 * group's name is an expression, refused as any unknown name is. Everything else is checked
 * by POST /tables itself.
 */
export function specOf(form: TableForm, dataset: CatalogDataset | undefined, groups: readonly string[]): TableSpec {
  const names = usableNames(dataset, groups);
  const axis = (text: string): SpecAxisItem[] => lines(text).map((line) => axisEntry(line, names));
  const spec: TableSpec = {
    SurveyCode: form.survey,
    PopulationBaseCode: form.base.trim(),
    Rows: axis(form.rows),
    Columns: axis(form.columns),
    Statistics: STAT_NAMES.filter((name) => form.statistics.includes(name) || ALWAYS_COMPUTED.includes(name)),
    Missing: form.missing,
  };
  if (form.weight === UNWEIGHTED) spec.Weight = null;
  else if (form.weight !== '') spec.Weight = form.weight;
  return spec;
}

/** The variables and the codebook codes of `groups` (the user's): the names a line may use. */
export interface UsableNames {
  variables: Set<string>;
  codes: Set<string>;
}

export function usableNames(dataset: CatalogDataset | undefined, groups: readonly string[]): UsableNames {
  return {
    variables: new Set(dataset?.info.variables.filter((variable) => groups.includes(variable.group)).map((variable) => variable.name) ?? []),
    codes: new Set(dataset?.info.codes.filter((code) => groups.includes(code.group)).map((code) => code.name) ?? []),
  };
}

/** ` = ` (an equals sign with a space each side) between a label and its expression. */
const LABEL_SEPARATOR = ' = ';

/**
 * One line of Rows or Columns: a usable variable as a whole variable; `Label = expression`
 * (`Degree: BA+ = degree=3,4`) as a labelled expression, when the text before the first
 * ` = ` is no expression itself (no `=`, parentheses, `@` or AND/OR/NOT, not a variable or
 * code name, not a name in double quotes: `sex = 1` and `"two words" = 1` stay expressions);
 * anything else as an expression.
 */
export function axisEntry(line: string, names: UsableNames): SpecAxisItem {
  if (names.variables.has(line)) return { Variable: line };
  const at = line.indexOf(LABEL_SEPARATOR);
  if (at > 0) {
    const label = line.slice(0, at).trim();
    const expression = line.slice(at + LABEL_SEPARATOR.length).trim();
    // A name in double quotes (`"two words" = 1`, as the catalog and info print such a name) starts an expression.
    const quotedName = /^"(?:[^"\\]|\\.)*"$/.test(label);
    const plain = !quotedName && !/[=()@]/.test(label) && !/\b(AND|OR|NOT)\b/.test(label) && !names.variables.has(label) && !names.codes.has(label);
    if (plain && label !== '' && expression !== '') return { Expression: expression, Label: label };
  }
  return { Expression: line };
}

/**
 * An expression that is one bare name (`polviewz`) that is neither a variable nor a code of
 * the user's groups: the problem as the form says it, "unknown variable", with near names
 * only among those groups' (the same words for another group's name as for a made-up one).
 * Undefined for anything else (the engine checks it).
 */
export function unknownBareName(expression: string, names: UsableNames): string | undefined {
  let tree: ReturnType<typeof parseExpression>;
  try {
    tree = parseExpression(expression);
  } catch {
    return undefined;
  }
  if (!('code' in tree)) return undefined;
  const name = tree.code;
  if (names.codes.has(name)) return undefined;
  if (names.variables.has(name)) return `${quoteText(name)} is a variable, not a condition: write ${name}=value (one or more of its codes).`;
  const near = suggest(name, [...names.variables, ...names.codes]);
  return `unknown variable ${quoteText(shorten(name))}${near.length > 0 ? `; did you mean ${near.map((candidate) => quoteText(candidate)).join(', ')}?` : '.'} The variables and codes you may use are listed below the form.`;
}

/** The form that gives `spec` back (a saved table reopened). */
export function formOfSpec(spec: TableSpec): TableForm {
  const text = (items: SpecAxisItem[]): string => items.map((item) => ('Variable' in item ? item.Variable : item.Label === undefined ? item.Expression : `${item.Label}${LABEL_SEPARATOR}${item.Expression}`)).join('\n');
  return {
    survey: spec.SurveyCode,
    base: spec.PopulationBaseCode,
    rows: text(spec.Rows),
    columns: text(spec.Columns),
    weight: spec.Weight === null ? UNWEIGHTED : (spec.Weight ?? ''),
    statistics: spec.Statistics,
    missing: spec.Missing,
  };
}

/** A stored spec read back; undefined when it is not one this page wrote. */
export function parseSpec(text: string): TableSpec | undefined {
  try {
    const spec = JSON.parse(text) as TableSpec;
    return typeof spec === 'object' && spec !== null && typeof spec.SurveyCode === 'string' && Array.isArray(spec.Rows) && Array.isArray(spec.Columns) ? spec : undefined;
  } catch {
    return undefined;
  }
}
