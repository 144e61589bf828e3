import { CrosstabError, ErrorCode } from '../errors.js';
import type { StoredVariable } from '../dataset/format.js';
import { suggest } from '../text/suggest.js';

/**
 * The targets of `crosstab weight` (docs/weighting.md), parsed and checked against the
 * dataset's variables. Every problem is a CrosstabError naming the file and the JSON path
 * (`$.margins[1].proportions["3"]`) and saying how to fix it.
 */
export interface TargetSet {
  /** JSON path of this set (`$` or `$.groups["2"]`). */
  path: string;
  /** Total the proportions are scaled to; default: the sum of the base weights of the set's respondents. */
  total?: number;
  margins: MarginTargets[];
}

export interface MarginTargets {
  path: string;
  /** One variable, or several for interlocked cells. */
  variables: StoredVariable[];
  kind: 'proportions' | 'totals';
  /** Per target cell: the value rank (1-based) of each variable, the number, and its JSON path. */
  cells: Array<{ ranks: number[]; value: number; path: string }>;
}

export interface WeightTargets {
  /** The variable whose values each have their own target set, if any. */
  groupBy?: StoredVariable;
  /** Without groupBy, one set under the key ''; with it, one per group value rank (0 = blank, as "NA"). */
  sets: Map<number, TargetSet>;
}

/** The key naming blank (missing) values, as in expressions (`VAR=NA`). */
export const BLANK_KEY = 'NA';
const PROPORTION_TOLERANCE = 1e-6;

export class TargetsReader {
  constructor(
    private readonly file: string,
    private readonly variables: readonly StoredVariable[],
  ) {}

  error(path: string, problem: string, hint: string, code: ErrorCode = ErrorCode.invalidInput, extra: Record<string, unknown> = {}): CrosstabError {
    return new CrosstabError(code, `${this.file}: ${path}: ${problem}`, { file: this.file, field: path, problem, hint, ...extra });
  }

  parse(text: string): WeightTargets {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw this.error('$', `is not valid JSON (${(error as Error).message})`, 'Write the targets as one JSON object; see docs/weighting.md for the format.');
    }
    const root = this.object(json, '$', ['groupBy', 'groups', 'total', 'margins']);
    if (root.groupBy === undefined) {
      if (root.groups !== undefined) throw this.error('$.groups', 'is given without "groupBy"', 'Add "groupBy": the variable whose values name the groups.');
      return { sets: new Map([[0, this.set(root, '$')]]) };
    }
    if (root.margins !== undefined || root.total !== undefined) {
      throw this.error('$', 'has "margins" or "total" beside "groupBy"', 'With "groupBy", put each group\'s "margins" (and "total") under "groups".');
    }
    const groupBy = this.variable(root.groupBy, '$.groupBy');
    const groups = this.object(root.groups, '$.groups');
    const sets = new Map<number, TargetSet>();
    for (const [key, value] of Object.entries(groups)) {
      const path = `$.groups${keyPath(key)}`;
      const rank = this.rank(groupBy, key, path);
      sets.set(rank, this.set(this.object(value, path, ['total', 'margins']), path));
    }
    if (sets.size === 0) throw this.error('$.groups', 'has no groups', `Give a target set for each value of ${groupBy.name}.`);
    return { groupBy, sets };
  }

  private set(json: Record<string, unknown>, path: string): TargetSet {
    const total = json.total === undefined ? undefined : this.number(json.total, `${path}.total`, true);
    if (!Array.isArray(json.margins) || json.margins.length === 0) {
      throw this.error(`${path}.margins`, 'must be a non-empty array of margins', 'Add "margins": [{ "variable": "sex", "proportions": { "1": 0.49, "2": 0.51 } }].');
    }
    const margins = json.margins.map((margin, i) => this.margin(margin, `${path}.margins[${i}]`));
    const seen = new Set<string>();
    for (const margin of margins) {
      const key = margin.variables.map((v) => v.name).join('\0');
      if (seen.has(key)) throw this.error(margin.path, `repeats the margin of ${margin.variables.map((v) => v.name).join(' x ')}`, 'Give each margin once.');
      seen.add(key);
    }
    return { path, total, margins };
  }

  private margin(json: unknown, path: string): MarginTargets {
    const margin = this.object(json, path, ['variable', 'variables', 'proportions', 'totals']);
    if ((margin.variable === undefined) === (margin.variables === undefined)) {
      throw this.error(path, 'needs exactly one of "variable" (one variable) or "variables" (interlocked cells)', 'Write "variable": "sex", or "variables": ["sex", "agecat"] for cells of their cross-classification.');
    }
    if ((margin.proportions === undefined) === (margin.totals === undefined)) {
      throw this.error(path, 'needs exactly one of "proportions" or "totals"', 'Give the targets as "proportions" (summing to 1) or as "totals" (population counts).');
    }
    const kind = margin.proportions !== undefined ? 'proportions' : 'totals';
    const targetsPath = `${path}.${kind}`;
    const raw = margin[kind];
    let variables: StoredVariable[];
    const cells: MarginTargets['cells'] = [];
    if (margin.variable !== undefined) {
      const variable = this.variable(margin.variable, `${path}.variable`);
      variables = [variable];
      for (const [key, value] of Object.entries(this.object(raw, targetsPath))) {
        const cellPath = `${targetsPath}${keyPath(key)}`;
        cells.push({ ranks: [this.rank(variable, key, cellPath)], value: this.number(value, cellPath, false), path: cellPath });
      }
    } else {
      if (!Array.isArray(margin.variables) || margin.variables.length < 2) {
        throw this.error(`${path}.variables`, 'must be an array of two or more variable names', 'For one variable, write "variable": "NAME".');
      }
      variables = margin.variables.map((name, i) => this.variable(name, `${path}.variables[${i}]`));
      if (!Array.isArray(raw)) throw this.error(targetsPath, 'must be an array of { "cell": [values...], "value": number }', 'List one entry per cell of the cross-classification.');
      raw.forEach((entry, i) => {
        const cellPath = `${targetsPath}[${i}]`;
        const cell = this.object(entry, cellPath, ['cell', 'value']);
        if (!Array.isArray(cell.cell) || cell.cell.length !== variables.length) {
          throw this.error(`${cellPath}.cell`, `must list one value for each of ${variables.map((v) => v.name).join(', ')}`, 'Write "cell": ["1", "2"] in the order of "variables".');
        }
        const ranks = cell.cell.map((value, j) => this.rank(variables[j]!, value, `${cellPath}.cell[${j}]`));
        cells.push({ ranks, value: this.number(cell.value, `${cellPath}.value`, false), path: cellPath });
      });
    }
    if (cells.length === 0) throw this.error(targetsPath, 'has no categories', 'Give a target for every category of the data.');
    // The dataset's value order, blanks last: R's factor levels, whose first is calibration's reference category.
    const order = (rank: number) => (rank === 0 ? Infinity : rank);
    cells.sort((a, b) => {
      for (let j = 0; j < a.ranks.length; j++) if (a.ranks[j] !== b.ranks[j]) return order(a.ranks[j]!) - order(b.ranks[j]!);
      return 0;
    });
    const seen = new Map<string, string>();
    for (const cell of cells) {
      const key = cell.ranks.join(',');
      const before = seen.get(key);
      if (before !== undefined) throw this.error(cell.path, `names the same category as ${before}`, 'Give each category once.');
      seen.set(key, cell.path);
    }
    if (kind === 'proportions') {
      const sum = cells.reduce((total, cell) => total + cell.value, 0);
      if (Math.abs(sum - 1) > PROPORTION_TOLERANCE) {
        throw this.error(targetsPath, `sums to ${sum}, not 1`, 'Proportions of one margin must sum to 1 (within 1e-6); fix them, or give "totals" instead.');
      }
    }
    return { path, variables, kind, cells };
  }

  private object(value: unknown, path: string, known?: string[]): Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw this.error(path, `must be a JSON object, not ${Array.isArray(value) ? 'an array' : JSON.stringify(value) ?? 'missing'}`, 'See docs/weighting.md for the targets format.');
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (known !== undefined && !known.includes(key)) {
        const near = suggest(key, known);
        throw this.error(`${path}${keyPath(key)}`, `is not a known key${near.length > 0 ? `; did you mean "${near[0]}"?` : ''}`, `Keys here: ${known.join(', ')}.`);
      }
    }
    return record;
  }

  private number(value: unknown, path: string, positive: boolean): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (positive && value === 0)) {
      throw this.error(path, `must be a finite number ${positive ? '> 0' : '>= 0'}, not ${JSON.stringify(value)}`, 'Write the target as a JSON number.');
    }
    return value;
  }

  private variable(name: unknown, path: string): StoredVariable {
    if (typeof name !== 'string') throw this.error(path, 'must be a variable name (a string)', 'Name a variable of the dataset (`crosstab info DATASET` lists them).');
    const variable = this.variables.find((candidate) => candidate.name === name);
    if (variable === undefined) {
      const suggestions = suggest(name, this.variables.map((v) => v.name));
      throw this.error(path, `names "${name}", which is not a variable of the dataset${suggestions.length > 0 ? `; did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : ''}`, 'Name a variable of the dataset (`crosstab info DATASET` lists them).', ErrorCode.unknownVariable, { suggestions, listed: 'variables' });
    }
    return variable;
  }

  /** The value rank (1-based; 0 for the blank key "NA") that `key` names. */
  private rank(variable: StoredVariable, key: unknown, path: string): number {
    if (typeof key !== 'string' && typeof key !== 'number') throw this.error(path, 'must be a value (a string or number)', `Write a value of ${variable.name} as text.`);
    const text = String(key);
    if (text === BLANK_KEY) return 0;
    let index = variable.values.indexOf(text);
    if (index < 0 && variable.kind === 'numeric' && text.trim() !== '' && Number.isFinite(Number(text))) index = variable.values.findIndex((value) => Number(value) === Number(text));
    if (index < 0) {
      const labelled = Object.entries(variable.valueLabels ?? {}).find(([, label]) => label === text);
      if (labelled !== undefined) index = variable.values.indexOf(labelled[0]);
    }
    if (index < 0) {
      const shown = variable.values.slice(0, 12).join(', ') + (variable.values.length > 12 ? ', …' : '');
      throw this.error(path, `names ${JSON.stringify(text)}, which no respondent has in ${variable.name}`, `Values of ${variable.name}: ${shown} (and "${BLANK_KEY}" for blanks). A category without respondents cannot be weighted to a target: drop it or merge it into another.`, ErrorCode.unknownValue, { listed: 'values' });
    }
    return index + 1;
  }
}

function keyPath(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
