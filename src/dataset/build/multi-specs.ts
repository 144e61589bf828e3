import { CrosstabError, ErrorCode } from '../../errors.js';
import type { RawColumn, RawTable } from '../input/raw-table.js';
import type { Codebook } from './codebook.js';
import type { MultiSpec } from './multi-response.js';

/** A delimited column asked for at build (`--multi COL[:DELIM]`). */
export interface DelimitedColumn {
  column: string;
  /** Default `;`. */
  delimiter?: string;
}

/**
 * Every multi-response variable of a build, with its labels: the codebook's (`"multi"`),
 * the delimited columns asked for, and the input's own sets (an SPSS file's multiple-response
 * sets). A dichotomy's values are labelled with its columns' labels (codebook first, then the
 * input's, then the column name); a category set's with its columns' value labels.
 */
export function multiSpecs(table: RawTable, codebook: Codebook | undefined, codebookPath: string | undefined, delimited: DelimitedColumn[]): MultiSpec[] {
  const byName = new Map(table.columns.map((column) => [column.name, column]));
  const columnLabel = (name: string) => codebook?.variables[name]?.label ?? byName.get(name)?.label ?? name;
  const valueLabels = (columns: RawColumn[]) => Object.assign({}, ...columns.map((column) => ({ ...column.valueLabels, ...codebook?.variables[column.name]?.values }))) as Record<string, string>;
  const withLabels = (spec: MultiSpec): MultiSpec => {
    const labels = spec.counted !== undefined
      ? Object.fromEntries(spec.columns.map((name, i) => [String(i + 1), columnLabel(name)]))
      : valueLabels(spec.columns.flatMap((name) => byName.get(name) ?? []));
    return Object.keys(labels).length > 0 ? { ...spec, valueLabels: { ...labels, ...spec.valueLabels } } : spec;
  };
  const specs: MultiSpec[] = [];
  for (const set of table.multiSets ?? []) specs.push(withLabels(set));
  for (const entry of codebook?.multi ?? []) {
    const spec: MultiSpec = { name: entry.name, columns: entry.columns, from: codebookPath ?? 'codebook' };
    if (entry.counted !== undefined) spec.counted = entry.counted;
    if (entry.label !== undefined) spec.label = entry.label;
    if (entry.group !== undefined) spec.group = entry.group;
    specs.push(withLabels(spec));
  }
  for (const { column, delimiter = ';' } of delimited) {
    const found = byName.get(column);
    if (!found) {
      throw new CrosstabError(ErrorCode.invalidOption, `multi names column "${column}", which ${table.source} does not have`, {
        field: 'multi',
        hint: 'Give a column of the input, as COLUMN or COLUMN:DELIMITER.',
      });
    }
    const spec: MultiSpec = { name: column, columns: [column], delimiter, from: `multi ${column}` };
    if (found.label !== undefined) spec.label = found.label;
    specs.push(withLabels(spec));
  }
  const seen = new Set<string>();
  for (const spec of specs) {
    if (seen.has(spec.name)) {
      throw new CrosstabError(ErrorCode.invalidInput, `${spec.from}: multi-response variable "${spec.name}" is defined twice`, { field: spec.name, hint: 'Give each multi-response variable its own name.' });
    }
    seen.add(spec.name);
  }
  return specs;
}
