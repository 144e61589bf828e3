/**
 * The Tables page's form and its spec: the body of a POST /tables request, built from the
 * form's fields and filled back into them (a saved table is stored as that body).
 */
import { STAT_NAMES, type StatName } from '../index.js';
import type { CatalogDataset } from '../http/survey-catalog.js';

/** An entry of Rows or Columns, as POST /tables takes it. */
export type SpecAxisItem = { Expression: string } | { Variable: string };

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
  const names = new Set(dataset?.info.variables.filter((variable) => groups.includes(variable.group)).map((variable) => variable.name) ?? []);
  const axis = (text: string): SpecAxisItem[] => lines(text).map((line) => (names.has(line) ? { Variable: line } : { Expression: line }));
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

/** The form that gives `spec` back (a saved table reopened). */
export function formOfSpec(spec: TableSpec): TableForm {
  const text = (items: SpecAxisItem[]): string => items.map((item) => ('Variable' in item ? item.Variable : item.Expression)).join('\n');
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
