import {
  isCrosstabError,
  tableStatistics,
  tableToCSV,
  tableToJSON,
  tableToXLSX,
  type AxisItem,
  type CrosstabError,
  type DisplayOptions,
  type TableQuery,
  type TableResult,
  type TableStatistics,
} from '../index.js';
import { negotiateFormat, XLSX_TYPE } from './accept.js';
import { expandRequestAudiences, type RequestExpression } from './audience-expansion.js';
import { authorize, entitledToSurvey } from './auth.js';
import type { CrosstabDataset, HandlerRequest } from './handler-types.js';
import { headerOf } from './headers.js';
import type { OperationReply } from './operation-reply.js';
import type { AuthenticatedContext, RouteResult } from './route.js';
import { fromEngineError, isServiceError, quote, serviceError, type ServiceError } from './service-error.js';
import { validateTablesRequest, type TableAxisItem, type TablesRequest } from './tables-request.js';

/** Most cells (rows x columns, after whole variables are expanded) one table may have. */
export const MAX_TABLE_CELLS = 250_000;

const CSV_TYPE = 'text/csv; charset=utf-8';

/**
 * POST /tables' check of the Accept header, from the headers alone (after the caller, before
 * the body): JSON, CSV or an XLSX workbook, else 406.
 */
export function tablesAccept(request: HandlerRequest): ServiceError | undefined {
  if (negotiateFormat(headerOf(request.headers, 'accept')) !== undefined) return undefined;
  return serviceError('not_acceptable', `POST /tables answers in application/json, text/csv or ${XLSX_TYPE}.`, `Send \`Accept: application/json\`, \`Accept: text/csv\` or \`Accept: ${XLSX_TYPE}\`.`);
}

/** The download name of a table workbook: `<SurveyCode>-table.xlsx`, the code cut to safe file-name characters. */
export function workbookFileName(survey: string): string {
  return `${survey.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64)}-table.xlsx`;
}

/**
 * POST /tables, after the caller, Accept, Content-Type, size and JSON were checked (by the
 * route pipeline): a table of base AND row AND column cells (weighted, respondents, stability,
 * the requested statistics, margins and labels), as `table()` computes it. Then fields,
 * survey, group, axes, expressions; entitlements per expression as POST /crosstab; billed
 * once, only for a result (recorded by the pipeline before it is sent).
 */
export async function tablesOperation(context: AuthenticatedContext): Promise<RouteResult> {
  const { caller: key, entry, service, request } = context;
  const { surveys, basePath } = service;
  const format = negotiateFormat(headerOf(request.headers, 'accept')) ?? 'json';
  const body = validateTablesRequest(context.json);
  if (isServiceError(body)) return body;
  entry.survey = body.SurveyCode.slice(0, 64);

  const visible = (): string[] => [...surveys.keys()].filter((survey) => entitledToSurvey(key, survey));
  if (!entitledToSurvey(key, body.SurveyCode)) {
    return serviceError('forbidden_survey', `This API key is not entitled to survey ${quote(body.SurveyCode)}.`, `The key is entitled to: ${visible().join(', ') || 'no survey served here'}. Ask the provider to license the survey for your key.`, 'SurveyCode');
  }
  const dataset = surveys.get(body.SurveyCode);
  if (dataset === undefined) {
    return serviceError('unknown_survey', `No survey ${quote(body.SurveyCode)} is served here.`, `Use one of: ${visible().join(', ')} (SurveyCodes are case-sensitive).`, 'SurveyCode');
  }
  if (dataset.table === undefined) {
    return serviceError('not_found', `Survey ${body.SurveyCode} is served for POST /crosstab only, not for tables.`, 'Use POST /crosstab, or ask the provider to serve the survey as a dataset that makes tables.', 'SurveyCode');
  }
  const access = authorize(key, dataset.info, body.AuthorizationGroup);
  if (isServiceError(access)) return access;
  const catalog = `${basePath}/surveys/${encodeURIComponent(body.SurveyCode)}`;
  const axes = checkAxes(body, dataset, access.allowedGroups, catalog);
  if (isServiceError(axes)) return axes;
  const base = await expandTableAudiences(context, dataset, access.allowedGroups, body.PopulationBaseCode, axes, catalog);
  if (isServiceError(base)) return base;

  let result: TableResult;
  let statistics: TableStatistics | undefined;
  try {
    const query: TableQuery = {
      base,
      rows: axes.rows,
      columns: axes.columns,
      // As the library: "No answer" entries shown unless Missing is "hide"; percentages of the total unless PercentBase is "valid".
      missing: body.Missing ?? 'show',
      percentBase: body.PercentBase ?? 'total',
      ...(body.Weight === undefined ? {} : { weight: body.Weight }),
      ...(access.allowedGroups === undefined ? {} : { allowedGroups: access.allowedGroups }),
    };
    result = await dataset.table(query);
    statistics = body.Statistics.length === 0 ? undefined : tableStatistics(result, { stats: body.Statistics });
  } catch (error) {
    if (!isCrosstabError(error)) throw error;
    return fromTableError(error, catalog);
  }
  let reply: OperationReply;
  if (format === 'xlsx') {
    // Made whole before anything is sent or billed: a workbook that cannot be written is an error (500), never part of a file.
    const workbook = await tableToXLSX(result, statistics, displayOf(dataset));
    reply = { status: 200, headers: { 'content-type': XLSX_TYPE, 'content-disposition': `attachment; filename="${workbookFileName(body.SurveyCode)}"` }, body: workbook };
  } else if (format === 'csv') {
    reply = { status: 200, headers: { 'content-type': CSV_TYPE }, body: tableToCSV(result, statistics) };
  } else {
    reply = {
      status: 200,
      headers: {},
      body: JSON.stringify({ ResultCode: 0, ResultDescription: '', SurveyCode: body.SurveyCode, AudienceReportUnits: result.units, Table: tableToJSON(result, statistics) }),
    };
  }
  return { body: reply, usage: { survey: body.SurveyCode, targets: result.rows.length + result.columns.length, operation: 'table' } };
}

/**
 * The base and the axes' expressions with their audiences expanded (axes changed in place):
 * an entry written with `@name` and no label keeps what was written as its label, its
 * expression the expanded text. Returns the base, or the refusal.
 */
async function expandTableAudiences(context: AuthenticatedContext, dataset: CrosstabDataset, allowedGroups: readonly string[] | undefined, base: string, axes: { rows: AxisItem[]; columns: AxisItem[] }, catalog: string): Promise<string | ServiceError> {
  const expressions: RequestExpression[] = [{ text: base, field: 'PopulationBaseCode', label: 'PopulationBaseCode' }];
  const places: Array<{ items: AxisItem[]; index: number }> = [];
  for (const [items, field] of [[axes.rows, 'Rows'], [axes.columns, 'Columns']] as const) {
    items.forEach((item, index) => {
      if (typeof item !== 'object' || !('expr' in item) || !item.expr.includes('@')) return;
      expressions.push({ text: item.expr, field, label: `${field}[${index}]` });
      places.push({ items, index });
    });
  }
  if (expressions.length === 1 && !base.includes('@')) return base;
  const expanded = await expandRequestAudiences({ store: context.service.audiences, caller: context.caller, dataset, allowedGroups, expressions, catalog });
  if (isServiceError(expanded)) return expanded;
  places.forEach(({ items, index }, k) => {
    const item = items[index] as { expr: string; label?: string };
    const text = expanded[k + 1] as string;
    if (text !== item.expr) items[index] = { expr: text, label: item.label ?? item.expr };
  });
  return expanded[0] as string;
}

/** The workbook's title (the survey's name) and the variable labels over its column groups, as `crosstab table` shows them. */
function displayOf(dataset: CrosstabDataset): DisplayOptions {
  const { info } = dataset;
  return {
    title: info.name === info.survey ? info.name : `${info.name} (${info.survey})`,
    variableLabels: Object.fromEntries(info.variables.flatMap((variable) => (variable.label ? [[variable.name, variable.label]] : []))),
  };
}

/**
 * The axes as table() takes them, after checking that every whole variable is one the
 * caller may see (so an unknown name is suggested only among those) and that the table,
 * expanded, has at most MAX_TABLE_CELLS cells.
 */
function checkAxes(body: TablesRequest, dataset: CrosstabDataset, allowed: readonly string[] | undefined, catalog: string): { rows: AxisItem[]; columns: AxisItem[] } | ServiceError {
  const mine = dataset.info.variables.filter((variable) => allowed === undefined || allowed.includes(variable.group));
  const sizes: number[] = [];
  const convert = (items: TableAxisItem[], field: 'Rows' | 'Columns'): AxisItem[] | ServiceError => {
    const converted: AxisItem[] = [];
    let size = 0;
    for (const [i, item] of items.entries()) {
      if ('Expression' in item) {
        converted.push(item.Label === undefined ? { expr: item.Expression } : { expr: item.Expression, label: item.Label });
        size++;
        continue;
      }
      const variable = mine.find((candidate) => candidate.name === item.Variable);
      if (variable === undefined) {
        const near = mine.map((candidate) => candidate.name).filter((name) => name.toLowerCase() === item.Variable.toLowerCase());
        const didYouMean = near.length > 0 ? ` Did you mean ${JSON.stringify(near[0])}?` : '';
        return serviceError('unknown_variable', `${field}[${i}]: unknown variable ${quote(item.Variable)}.`, `GET ${catalog} lists the variables your key may use.${didYouMean}`, field);
      }
      if (variable.values === undefined) {
        return serviceError('invalid_request', `${field}[${i}]: variable ${variable.name} has ${variable.distinct} values, too many to expand.`, `Use range expressions instead; GET ${catalog} gives its range.`, field);
      }
      converted.push({ variable: variable.name });
      size += variable.values.length;
    }
    sizes.push(size);
    return converted;
  };
  const rows = convert(body.Rows, 'Rows');
  if (isServiceError(rows)) return rows;
  const columns = convert(body.Columns, 'Columns');
  if (isServiceError(columns)) return columns;
  const [rowCount = 0, columnCount = 0] = sizes;
  if (rowCount * columnCount > MAX_TABLE_CELLS) {
    return serviceError('invalid_request', `The table has ${rowCount} rows x ${columnCount} columns = ${rowCount * columnCount} cells; at most ${MAX_TABLE_CELLS} are allowed.`, 'Split the table into several requests.', 'Rows');
  }
  return { rows, columns };
}

/** The engine names the table's parts `base`, `rows[i]`, `columns[i]`, `weight`; the API calls them differently. */
function tableFieldOf(engineField: unknown): { field: string; label: string } | undefined {
  if (engineField === 'base') return { field: 'PopulationBaseCode', label: 'PopulationBaseCode' };
  if (engineField === 'weight') return { field: 'Weight', label: 'Weight' };
  const axis = typeof engineField === 'string' ? /^(rows|columns)(\[\d+\])?/.exec(engineField) : null;
  if (axis === null) return undefined;
  const field = axis[1] === 'rows' ? 'Rows' : 'Columns';
  return { field, label: `${field}${axis[2] ?? ''}` };
}

/** An engine error of table() or its statistics as a service error naming the request field. */
export function fromTableError(error: CrosstabError, catalog: string): ServiceError {
  const where = tableFieldOf(error.details.field);
  const mapped = fromEngineError(error, catalog);
  if (where === undefined) return mapped;
  return { ...mapped, message: `${where.label}: ${error.details.problem ?? error.message}`, field: where.field };
}
