/**
 * The JSON table document of tableToJSON() described as OpenAPI 3.0 schema objects (the
 * REST API's POST /tables answer carries it as `Table`). Every object here is typed against
 * the TypeScript interface tableToJSON() fills: a field added there and not here (or marked
 * required in one and optional in the other) does not compile. The per-cell statistics come
 * from the statistics registry (FIGURES), so a new statistic is described where it is defined.
 */
import type { Cell, StabilityLevel, StabilityThresholds } from '../facade/types.js';
import type { ComparisonMethod } from '../stats/index.js';
import { LONELY_PSU } from '../stats/design-variance.js';
import { CORRECTIONS } from '../stats/significance.js';
import { STANDARD_ERROR_METHODS } from '../stats/standard-error.js';
import { DOMAINS, type VarianceKind } from './design-figures.js';
import type { RaoScottNotDefined } from './rao-scott-tests.js';
import { FIGURES, STAT_NAMES } from './statistics.js';
import type { TableJson, TableJsonAxisEntry, TableJsonCell, TableJsonComparison, TableJsonRaoScott } from './table-json.js';

/** An OpenAPI 3.0 schema object (JSON Schema with `nullable`). */
export type OpenApiSchema = { [keyword: string]: unknown };

/** Whether `Key` is optional in `T`. */
type IsOptional<T, Key extends keyof T> = object extends Pick<T, Key> ? true : false;

/** A schema for every field of `T`, saying whether the field is always present (as `T` does). */
type Fields<T> = { [Key in keyof T]-?: { schema: OpenApiSchema; optional: IsOptional<T, Key> } };

/** A closed object schema from its fields: `required` lists exactly the fields `T` always has. */
function objectSchema<T>(description: string, fields: Fields<T>): OpenApiSchema {
  const entries = Object.entries(fields) as Array<[string, { schema: OpenApiSchema; optional: boolean }]>;
  return {
    type: 'object',
    description,
    required: entries.filter(([, field]) => !field.optional).map(([name]) => name),
    additionalProperties: false,
    properties: Object.fromEntries(entries.map(([name, field]) => [name, field.schema])),
  };
}

const always = (schema: OpenApiSchema) => ({ schema, optional: false as const });
const sometimes = (schema: OpenApiSchema) => ({ schema, optional: true as const });
const text = (description: string): OpenApiSchema => ({ type: 'string', description });
const integer = (description: string, minimum?: number): OpenApiSchema => ({ type: 'integer', ...(minimum === undefined ? {} : { minimum }), description });
const number = (description: string): OpenApiSchema => ({ type: 'number', description });
/** A figure JSON writes as null where it is undefined (NaN). */
const figure = (description: string): OpenApiSchema => ({ type: 'number', nullable: true, description: `${description} null where undefined.` });
const indexes = (description: string): OpenApiSchema => ({ type: 'array', items: { type: 'integer', minimum: 0 }, description });
const oneOf = <Value extends string>(values: readonly Value[], description: string): OpenApiSchema => ({ type: 'string', enum: [...values], description });

const STABILITY_LEVELS = ['stable', 'caution', 'very-unstable'] as const satisfies readonly StabilityLevel[];
const COMPARISON_METHODS = ['linearization', 'pooled-effective'] as const satisfies readonly ComparisonMethod[];
const VARIANCE_KINDS = ['simple', 'taylor', 'replicate'] as const satisfies readonly VarianceKind[];
const RAO_SCOTT_NOT_DEFINED = ['overlapping-columns', 'overlapping-rows'] as const satisfies readonly RaoScottNotDefined['reason'][];

/** The field of the JSON cell each per-cell statistic fills, described by the registry. */
function figureFields(): Fields<Pick<TableJsonCell, (typeof FIGURES)[number]['field']>> {
  return Object.fromEntries(FIGURES.map((entry) => [entry.field, sometimes(figure(`${entry.description} Present when Statistics has ${entry.stat}.`))])) as Fields<
    Pick<TableJsonCell, (typeof FIGURES)[number]['field']>
  >;
}

/**
 * The component schemas of the table document, by name: `TableDocument` is the document
 * itself, the others its parts. `ref(name)` makes the reference to one of them (the caller
 * places them, e.g. under `#/components/schemas/`).
 */
export function tableJsonSchemas(ref: (name: string) => OpenApiSchema): Record<string, OpenApiSchema> {
  const sums = {
    weighted: always(number('Σ weights of the respondents (raw: divide by units for the projected audience).')),
    respondents: always(integer('Unweighted respondents.', 0)),
    sumSqWeights: always(number('Σ squared weights (for effective bases and standard errors).')),
    stability: always(oneOf(STABILITY_LEVELS, 'Low-base flag from respondents and stabilityThresholds.')),
  };
  const margin = objectSchema<Cell>('A margin: base AND row (rowTotals), base AND column (columnTotals), or the base (total).', sums);
  const cell = objectSchema<TableJsonCell>('The cell base AND row AND column, with the requested statistics (proportions 0-1).', {
    ...sums,
    ...figureFields(),
    letters: sometimes(text("sig: the key letters of the columns of its group this cell is significantly greater than ('' when none).")),
  });
  const axisEntry = objectSchema<TableJsonAxisEntry>('A row or column of the table.', {
    label: always(text('Its label, from the request or the codebook.')),
    expr: always(text('The expression that selects its respondents.')),
    variable: sometimes(text('The variable it was expanded from (a whole-variable entry).')),
    value: sometimes(text('Its value of variable (absent on the "No answer" entry).')),
    missing: sometimes({ type: 'boolean', enum: [true], description: 'true on a "No answer" entry: the base\'s respondents with a blank on variable (expr VAR=NA).' }),
    multi: sometimes({ type: 'boolean', enum: [true], description: 'true on every entry of a multi-response variable: its entries overlap and do not add up to the base.' }),
    net: sometimes({ type: 'boolean', enum: [true], description: 'true on the net entry of a multi-response variable: respondents holding any of its values.' }),
    group: sometimes(integer('Columns only, when compared: its index into columnGroups.', 0)),
    letter: sometimes(text('Columns only, when compared: its key letter within its group.')),
  });
  const thresholds = objectSchema<StabilityThresholds>('Respondent counts at or below which a cell is caution or very-unstable.', {
    cautionMax: always(integer('A cell with this many respondents or fewer is caution.', 0)),
    veryUnstableMax: always(integer('A cell with this many respondents or fewer is very-unstable.', 0)),
  });
  const settings = objectSchema<NonNullable<TableJson['statistics']>>('How the statistics were computed. Present when Statistics is not empty.', {
    stats: always({ type: 'array', items: { type: 'string', enum: [...STAT_NAMES] }, description: 'The statistics computed.' }),
    se: always(oneOf(STANDARD_ERROR_METHODS, 'Standard error method of the column proportion.')),
    test: always(oneOf(COMPARISON_METHODS, 'Column significance test.')),
    correction: always(oneOf(CORRECTIONS, "Multiple-comparison correction over a row's pairs within a group.")),
    alpha: always(number('Significance level of the column test.')),
    deff: always(oneOf(['replace', 'population'], 'Design effect reference variance.')),
    designRespondents: always(figure('Simple design: N of the linearization factor N/(N-1); null for Taylor and replicate designs.')),
    domain: always(oneOf(DOMAINS, "The base as a domain of the whole file's design (file) or a design of its own (base).")),
    lonelyPsu: always(oneOf(LONELY_PSU, 'Strata with one PSU (Taylor designs).')),
    variance: always(oneOf(VARIANCE_KINDS, 'The survey design variances use.')),
    percentBase: always(oneOf(['total', 'valid'], 'What the percentages are of.')),
  });
  const columnGroup = objectSchema<NonNullable<TableJson['columnGroups']>[number]>('Columns compared with one another.', {
    variable: always({ type: 'string', nullable: true, description: 'The variable the columns come from; null for a group of other columns.' }),
    columns: always(indexes('Column indexes, in table order.')),
    letters: always({ type: 'array', items: { type: 'string' }, description: 'The key letter of each of columns.' }),
  });
  const comparison = objectSchema<TableJsonComparison>('sig: one tested pair of columns within a row.', {
    row: always(integer('Row index.', 0)),
    group: always(integer('Index into columnGroups.', 0)),
    columnA: always(integer('Column index (the lower).', 0)),
    columnB: always(integer('Column index (the higher).', 0)),
    difference: always(figure('pA - pB (proportions).')),
    standardError: always(figure('Standard error of the difference.')),
    z: always(figure('Test statistic.')),
    pValue: always(figure('Two-sided p-value.')),
    adjustedPValue: always(figure('p-value after the correction.')),
    significant: always({ type: 'boolean', description: 'adjustedPValue < alpha.' }),
    respondentsInBoth: sometimes(integer("Columns that may share respondents: respondents in both columns' denominators.", 0)),
  });
  const raoScott = objectSchema<TableJsonRaoScott>('chisq: the Rao-Scott test of independence of one row variable against one column variable.', {
    rowVariable: always(text('The row variable.')),
    columnVariable: always(text('The column variable.')),
    rows: always(indexes('Table rows in the test.')),
    columns: always(indexes('Table columns in the test.')),
    pearson: always(figure('Pearson X².')),
    statistic: always(figure('Rao-Scott second-order F.')),
    ndf: always(figure('Numerator degrees of freedom.')),
    ddf: always(figure('Denominator degrees of freedom.')),
    pValue: always(figure('p-value.')),
  });
  const raoScottNotDefined = objectSchema<{ group: number; reason: RaoScottNotDefined['reason']; rowVariable?: string }>('chisq: a column group with no Rao-Scott test, and why.', {
    group: always(integer('Index into columnGroups.', 0)),
    reason: always(oneOf(RAO_SCOTT_NOT_DEFINED, 'overlapping-columns: its columns share respondents; overlapping-rows: the rows of rowVariable (multi-response) do.')),
    rowVariable: sometimes(text('With overlapping-rows: the multi-response row variable.')),
  });
  const designEffectNotDefined = objectSchema<NonNullable<TableJson['designEffectNotDefined']>>('deff: why every designEffect is null.', {
    reason: always(oneOf(['zero-weights'], "Some of the base's respondents have weight 0.")),
    respondents: always(integer('How many.', 0)),
  });
  const document = objectSchema<TableJson>(
    'cells[row][column], the margins, and with Statistics the settings and tests; weighted sums are raw (divide by units for the projected audience), proportions 0-1, null where undefined.',
    {
      base: always(text('The population base expression.')),
      weight: always({ type: 'string', nullable: true, description: 'The weight column; null = unweighted.' }),
      units: always(integer('AudienceReportUnits: divide a weighted sum by it for the projected audience.', 1)),
      stabilityThresholds: always(ref('TableStabilityThresholds')),
      missing: always(oneOf(['show', 'hide'], 'Whether whole variables have a "No answer" entry.')),
      percentBase: always(oneOf(['total', 'valid'], 'What the percentages are of.')),
      missingNote: always(text('missing and percentBase in words, as the text outputs print them.')),
      rows: always({ type: 'array', items: ref('TableAxisEntry') }),
      columns: always({ type: 'array', items: ref('TableAxisEntry') }),
      cells: always({ type: 'array', description: 'cells[row][column].', items: { type: 'array', items: ref('TableCell') } }),
      rowTotals: always({ type: 'array', description: 'Per row: base AND row.', items: ref('TableMargin') }),
      columnTotals: always({ type: 'array', description: 'Per column: base AND column.', items: ref('TableMargin') }),
      total: always(ref('TableMargin')),
      statistics: sometimes(ref('TableStatisticsSettings')),
      columnGroups: sometimes({ type: 'array', description: 'With Statistics: the column groups (always listed, for the letters).', items: ref('TableColumnGroup') }),
      comparisons: sometimes({ type: 'array', description: 'With sig: every pair tested, row by row.', items: ref('TableComparison') }),
      raoScott: sometimes({ type: 'array', description: 'With chisq: the Rao-Scott tests.', items: ref('TableRaoScott') }),
      raoScottNotDefined: sometimes({ type: 'array', description: 'With chisq: column groups with no Rao-Scott test.', items: ref('TableRaoScottNotDefined') }),
      designEffectNotDefined: sometimes(ref('TableDesignEffectNotDefined')),
    },
  );
  return {
    TableDocument: document,
    TableAxisEntry: axisEntry,
    TableCell: cell,
    TableMargin: margin,
    TableStabilityThresholds: thresholds,
    TableStatisticsSettings: settings,
    TableColumnGroup: columnGroup,
    TableComparison: comparison,
    TableRaoScott: raoScott,
    TableRaoScottNotDefined: raoScottNotDefined,
    TableDesignEffectNotDefined: designEffectNotDefined,
  };
}
