import { readFile } from 'node:fs/promises';
import { CrosstabError, ErrorCode } from '../../errors.js';
import { DEFAULT_GROUP, type CodeInfo } from '../format.js';

export interface VariableDescription {
  label?: string;
  group?: string;
  /** Value labels keyed by the value as written in the data (`"1": "Male"`). */
  values?: Record<string, string>;
}

/**
 * A multi-response variable of the codebook: `{"name": "cover", "columns": ["HICOV", ...],
 * "counted": "1"}` groups dichotomies (a respondent holds value i when column i has the
 * counted value); without `counted`, each column holds one chosen value (categories).
 */
export interface CodebookMulti {
  name: string;
  columns: string[];
  counted?: string;
  label?: string;
  group?: string;
}

/** Named codes and variable descriptions, from a codebook JSON file. */
export interface Codebook {
  variables: Record<string, VariableDescription>;
  codes: CodeInfo[];
  /** Multi-response variables made from columns of the input. */
  multi?: CodebookMulti[];
  /** Label of tables' "No answer" entries (respondents with a blank), kept in the dataset. */
  missingLabel?: string;
}

/**
 * Reads a codebook. Two shapes are accepted:
 * - `{"codes": {NAME: {expr, label?, group?}}, "variables": {VAR: {label?, group?, values?}}, "missingLabel"?: "No answer"}`
 * - a bare map of codes, `{NAME: {expr, label?, group?}}`.
 */
export async function readCodebook(path: string): Promise<Codebook> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CrosstabError(ErrorCode.fileNotFound, `${path}: cannot read the codebook (${(error as Error).message})`, {
      file: path,
      field: 'codebook',
      hint: 'Pass the path of a codebook JSON file.',
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(path, `is not valid JSON: ${(error as Error).message}`, 'Fix the JSON syntax.');
  }
  return parseCodebook(json, path);
}

export function parseCodebook(json: unknown, path = 'codebook'): Codebook {
  if (!isObject(json)) throw invalid(path, 'must be a JSON object', 'Write {"codes": {...}, "variables": {...}}.');
  const structured = 'codes' in json || 'variables' in json || 'multi' in json || typeof json.missingLabel === 'string';
  const codeMap = structured ? (json.codes ?? {}) : json;
  const variableMap = structured ? (json.variables ?? {}) : {};
  if (structured) {
    for (const key of Object.keys(json)) {
      if (key !== 'codes' && key !== 'variables' && key !== 'missingLabel' && key !== 'multi') {
        throw invalid(path, `has an unknown top-level key "${key}"`, 'Only "codes", "variables", "multi" and "missingLabel" are allowed.');
      }
    }
  }
  const missingLabel = structured ? json.missingLabel : undefined;
  if (missingLabel !== undefined && (typeof missingLabel !== 'string' || missingLabel.trim() === '')) {
    throw invalid(path, '"missingLabel" must be a non-empty string', 'Write "missingLabel": "No answer" (the label of tables\' entries for respondents with a blank).');
  }
  if (!isObject(codeMap)) throw invalid(path, '"codes" must be an object', 'Write "codes": {"NAME": {"expr": "..."}}.');
  if (!isObject(variableMap)) throw invalid(path, '"variables" must be an object', 'Write "variables": {"VAR": {"group": "..."}}.');

  const codes: CodeInfo[] = [];
  for (const [name, entry] of Object.entries(codeMap)) {
    const where = `code "${name}"`;
    if (!/^[A-Za-z_][A-Za-z0-9_.\-:#$@+]*$/.test(name)) {
      throw invalid(path, `${where}: a code name starts with a letter or _ and uses letters, digits and _ . - : # $ @ +`, 'Rename the code.');
    }
    if (!isObject(entry) || typeof entry.expr !== 'string' || entry.expr.trim() === '') {
      throw invalid(path, `${where} needs an "expr" string`, 'Write {"expr": "sex=2 AND age=18..34", "label": "...", "group": "..."}.');
    }
    checkStrings(path, where, entry, ['expr', 'label', 'group']);
    const code: CodeInfo = { name, expr: entry.expr, group: (entry.group as string | undefined) ?? DEFAULT_GROUP };
    if (typeof entry.label === 'string') code.label = entry.label;
    codes.push(code);
  }

  const variables: Record<string, VariableDescription> = {};
  for (const [name, entry] of Object.entries(variableMap)) {
    const where = `variable "${name}"`;
    if (!isObject(entry)) throw invalid(path, `${where} must be an object`, 'Write {"label": "...", "group": "...", "values": {"1": "..."}}.');
    checkStrings(path, where, entry, ['label', 'group', 'values']);
    const description: VariableDescription = {};
    if (typeof entry.label === 'string') description.label = entry.label;
    if (typeof entry.group === 'string') description.group = entry.group;
    if (entry.values !== undefined) {
      if (!isObject(entry.values) || !Object.values(entry.values).every((label) => typeof label === 'string')) {
        throw invalid(path, `${where}: "values" must map values to label strings`, 'Write "values": {"1": "Male", "2": "Female"}.');
      }
      description.values = { ...(entry.values as Record<string, string>) };
    }
    variables[name] = description;
  }
  const codebook: Codebook = missingLabel === undefined ? { variables, codes } : { variables, codes, missingLabel };
  if (structured && json.multi !== undefined) codebook.multi = parseMulti(json.multi, path);
  return codebook;
}

const MULTI_EXAMPLE = '{"name": "cover", "columns": ["HICOV", "PRIVCOV", "PUBCOV"], "counted": "1"}';

/** `"multi"`: one multi-response variable or a list of them. */
function parseMulti(value: unknown, path: string): CodebookMulti[] {
  const entries = Array.isArray(value) ? value : [value];
  const seen = new Set<string>();
  return entries.map((entry, i) => {
    const where = Array.isArray(value) ? `"multi"[${i}]` : '"multi"';
    if (!isObject(entry)) throw invalid(path, `${where} must be an object`, `Write ${MULTI_EXAMPLE}.`);
    for (const key of Object.keys(entry)) {
      if (!['name', 'columns', 'counted', 'label', 'group'].includes(key)) throw invalid(path, `${where} has an unknown key "${key}"`, 'Allowed keys: name, columns, counted, label, group.');
    }
    if (typeof entry.name !== 'string' || entry.name.trim() === '') throw invalid(path, `${where} needs a "name" string`, `Write ${MULTI_EXAMPLE}.`);
    const where2 = `multi-response variable "${entry.name}"`;
    if (seen.has(entry.name)) throw invalid(path, `${where2} is defined twice`, 'Give each multi-response variable its own name.');
    seen.add(entry.name);
    const columns = entry.columns;
    if (!Array.isArray(columns) || columns.length === 0 || !columns.every((column) => typeof column === 'string' && column !== '')) {
      throw invalid(path, `${where2}: "columns" must be a non-empty list of column names`, `Write ${MULTI_EXAMPLE}.`);
    }
    if (new Set(columns).size !== columns.length) throw invalid(path, `${where2}: "columns" names a column twice`, 'Name each column once.');
    const multi: CodebookMulti = { name: entry.name, columns: [...(columns as string[])] };
    if (entry.counted !== undefined) {
      if ((typeof entry.counted !== 'string' || entry.counted === '') && !(typeof entry.counted === 'number' && Number.isFinite(entry.counted))) {
        throw invalid(path, `${where2}: "counted" must be the value that marks a chosen column, such as "1"`, 'Write "counted": "1", or leave it out when each column holds a chosen value (categories).');
      }
      multi.counted = String(entry.counted);
    }
    for (const key of ['label', 'group'] as const) {
      if (entry[key] === undefined) continue;
      if (typeof entry[key] !== 'string') throw invalid(path, `${where2}: "${key}" must be a string`, 'Quote the value.');
      multi[key] = entry[key];
    }
    return multi;
  });
}

function checkStrings(path: string, where: string, entry: Record<string, unknown>, allowed: string[]): void {
  for (const [key, value] of Object.entries(entry)) {
    if (!allowed.includes(key)) throw invalid(path, `${where} has an unknown key "${key}"`, `Allowed keys: ${allowed.join(', ')}.`);
    if (key !== 'values' && typeof value !== 'string') throw invalid(path, `${where}: "${key}" must be a string`, 'Quote the value.');
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(path: string, message: string, hint: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidCodebook, `${path}: ${message}`, { file: path, hint });
}
