import { MAX_AXIS, STAT_NAMES, type StatName } from '../index.js';
import { MAX_EXPRESSION_LENGTH, MAX_NAME_LENGTH } from './crosstab-request.js';
import { quote, serviceError, type ServiceError } from './service-error.js';

/** An entry of Rows or Columns: an expression, a labelled expression, or a whole variable (one entry per value). */
export type TableAxisItem = { Expression: string; Label?: string } | { Variable: string };

/** The body of POST /tables, after validation. */
export interface TablesRequest {
  SurveyCode: string;
  AuthorizationGroup?: string;
  PopulationBaseCode: string;
  Rows: TableAxisItem[];
  Columns: TableAxisItem[];
  /** A weight column; null = unweighted; absent = the survey's first weight. */
  Weight?: string | null;
  Statistics: StatName[];
  /** Whether a whole variable's blank answers get an entry of their own (default show, as table()). */
  Missing?: 'show' | 'hide';
  /** What percentages are of: every respondent of the base (total, default) or those who answered (valid). */
  PercentBase?: 'total' | 'valid';
  /** Groups of columns to compare (0-based column indexes, the columns as expanded); default: each whole variable's values. */
  ColumnGroups?: number[][];
}

export const TABLE_FIELDS = ['SurveyCode', 'AuthorizationGroup', 'PopulationBaseCode', 'Rows', 'Columns', 'Weight', 'Statistics', 'Missing', 'PercentBase', 'ColumnGroups'] as const;
const HINT = 'Send e.g. {"SurveyCode":"GSS","PopulationBaseCode":"*","Rows":[{"Variable":"degree"}],"Columns":["sex=1","sex=2"]}.';

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function invalid(field: string, message: string, hint = HINT): ServiceError {
  return serviceError('invalid_request', message, hint, field);
}

function checkString(value: unknown, what: string, field: string, max: number, required: boolean): ServiceError | undefined {
  if (value === undefined) return required ? invalid(field, `${what} is required.`) : undefined;
  if (typeof value !== 'string') return invalid(field, `${what} must be a string; got ${typeName(value)}.`);
  if (value.trim().length === 0) return invalid(field, `${what} must not be empty.`);
  if (value.length > max) return invalid(field, `${what} is ${value.length} characters long; the maximum is ${max}.`);
  return undefined;
}

function axisItem(value: unknown, where: string, field: 'Rows' | 'Columns'): TableAxisItem | ServiceError {
  if (typeof value === 'string') return checkString(value, where, field, MAX_EXPRESSION_LENGTH, true) ?? { Expression: value };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(field, `${where} must be an expression string, {"Expression": ..., "Label"?: ...} or {"Variable": ...}; got ${typeName(value)}.`);
  }
  const item = value as Record<string, unknown>;
  const keys = Object.keys(item);
  if ('Variable' in item) {
    if (keys.length !== 1) return invalid(field, `${where}: {"Variable": ...} takes no other field; got ${keys.map((key) => quote(key, 40)).join(', ')}.`);
    return checkString(item['Variable'], `${where}.Variable`, field, MAX_NAME_LENGTH, true) ?? { Variable: item['Variable'] as string };
  }
  const unknown = keys.find((key) => key !== 'Expression' && key !== 'Label');
  if (unknown !== undefined) return invalid(field, `${where} has an unknown field ${quote(unknown, 40)}; an entry is {"Expression", "Label"?} or {"Variable"}.`);
  const problem = checkString(item['Expression'], `${where}.Expression`, field, MAX_EXPRESSION_LENGTH, true) ?? checkString(item['Label'], `${where}.Label`, field, MAX_EXPRESSION_LENGTH, false);
  if (problem) return problem;
  return item['Label'] === undefined ? { Expression: item['Expression'] as string } : { Expression: item['Expression'] as string, Label: item['Label'] as string };
}

function axis(value: unknown, field: 'Rows' | 'Columns'): TableAxisItem[] | ServiceError {
  if (!Array.isArray(value)) return invalid(field, `${field} must be an array of 1 to ${MAX_AXIS} entries; ${value === undefined ? 'it is missing' : `got ${typeName(value)}`}.`);
  if (value.length === 0 || value.length > MAX_AXIS) return invalid(field, `${field} must have 1 to ${MAX_AXIS} entries; got ${value.length}.`);
  const items: TableAxisItem[] = [];
  // An index loop: a sparse array's holes are entries too (and refused).
  for (let i = 0; i < value.length; i++) {
    const item = axisItem(value[i], `${field}[${i}]`, field);
    if ('code' in item) return item;
    items.push(item);
  }
  return items;
}

/**
 * Validates a parsed JSON body against TablesRequest: the first problem, in a fixed field
 * order, so that an unchanged request always fails identically.
 */
export function validateTablesRequest(json: unknown): TablesRequest | ServiceError {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return serviceError('invalid_request', `The request body must be a JSON object; got ${typeName(json)}.`, HINT);
  const body = json as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!(TABLE_FIELDS as readonly string[]).includes(key)) {
      return serviceError('invalid_request', `Unknown field ${quote(key, 40)}.`, `Allowed fields: ${TABLE_FIELDS.join(', ')} (names are case-sensitive).`, key.length > 40 ? undefined : key);
    }
  }
  const nameProblem =
    checkString(body['SurveyCode'], 'SurveyCode', 'SurveyCode', MAX_NAME_LENGTH, true) ??
    (body['AuthorizationGroup'] === null ? undefined : checkString(body['AuthorizationGroup'], 'AuthorizationGroup', 'AuthorizationGroup', MAX_NAME_LENGTH, false)) ??
    checkString(body['PopulationBaseCode'], 'PopulationBaseCode', 'PopulationBaseCode', MAX_EXPRESSION_LENGTH, true);
  if (nameProblem) return nameProblem;
  const rows = axis(body['Rows'], 'Rows');
  if ('code' in rows) return rows;
  const columns = axis(body['Columns'], 'Columns');
  if ('code' in columns) return columns;

  const weight = body['Weight'];
  if (weight !== undefined && weight !== null) {
    const problem = checkString(weight, 'Weight', 'Weight', MAX_NAME_LENGTH, false);
    if (problem) return { ...problem, hint: 'Name one of the weights GET /surveys/{SurveyCode} lists, or null for unweighted counts.' };
  }
  const statistics = body['Statistics'] ?? [];
  const statsHint = `Use a list of ${STAT_NAMES.join(', ')}, e.g. ["vpct","index"].`;
  if (!Array.isArray(statistics)) return invalid('Statistics', `Statistics must be an array of statistic names; got ${typeName(statistics)}.`, statsHint);
  for (let i = 0; i < statistics.length; i++) {
    const name: unknown = statistics[i];
    if (typeof name !== 'string' || !(STAT_NAMES as readonly string[]).includes(name)) {
      return invalid('Statistics', `Statistics[${i}] is not a statistic: ${typeof name === 'string' ? quote(name, 40) : typeName(name)}.`, statsHint);
    }
  }
  const missing = body['Missing'];
  if (missing !== undefined && missing !== 'show' && missing !== 'hide') {
    return invalid('Missing', `Missing must be "show" or "hide"; got ${typeof missing === 'string' ? quote(missing, 40) : typeName(missing)}.`, 'Use "show" (the default: a "No answer" entry per whole variable) or "hide" (no such entry).');
  }
  const percentBase = body['PercentBase'];
  if (percentBase !== undefined && percentBase !== 'total' && percentBase !== 'valid') {
    return invalid('PercentBase', `PercentBase must be "total" or "valid"; got ${typeof percentBase === 'string' ? quote(percentBase, 40) : typeName(percentBase)}.`, 'Use "total" (the default: percentages of every respondent of the base) or "valid" (of those who answered).');
  }
  const columnGroups = body['ColumnGroups'];
  const groupsHint = 'Send arrays of 0-based column indexes, e.g. [[0, 1], [2, 3, 4]]: the columns as the answer numbers them, each whole variable expanded.';
  if (columnGroups !== undefined) {
    if (!Array.isArray(columnGroups) || columnGroups.length === 0 || columnGroups.length > MAX_AXIS) {
      return invalid('ColumnGroups', `ColumnGroups must be an array of 1 to ${MAX_AXIS} groups; got ${Array.isArray(columnGroups) ? `${columnGroups.length} groups` : typeName(columnGroups)}.`, groupsHint);
    }
    for (let g = 0; g < columnGroups.length; g++) {
      const group: unknown = columnGroups[g];
      if (!Array.isArray(group) || group.length === 0 || group.length > MAX_AXIS) {
        return invalid('ColumnGroups', `ColumnGroups[${g}] must be an array of 1 to ${MAX_AXIS} column indexes; got ${Array.isArray(group) ? `${group.length} indexes` : typeName(group)}.`, groupsHint);
      }
      for (let i = 0; i < group.length; i++) {
        const index: unknown = group[i];
        if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= MAX_AXIS) {
          return invalid('ColumnGroups', `ColumnGroups[${g}][${i}] must be a column index (a whole number from 0); got ${typeof index === 'number' ? String(index) : typeName(index)}.`, groupsHint);
        }
      }
    }
  }

  const request: TablesRequest = {
    SurveyCode: body['SurveyCode'] as string,
    PopulationBaseCode: body['PopulationBaseCode'] as string,
    Rows: rows,
    Columns: columns,
    Statistics: STAT_NAMES.filter((name) => (statistics as string[]).includes(name)),
  };
  if (typeof body['AuthorizationGroup'] === 'string') request.AuthorizationGroup = body['AuthorizationGroup'];
  if (weight !== undefined) request.Weight = weight as string | null;
  if (missing !== undefined) request.Missing = missing;
  if (percentBase !== undefined) request.PercentBase = percentBase;
  if (columnGroups !== undefined) request.ColumnGroups = (columnGroups as number[][]).map((group) => [...group]);
  return request;
}
