import {
  CHART_MAX_BARS,
  ErrorCode,
  STAT_NAMES,
  isCrosstabError,
  STREAM_BYTES_IN_FLIGHT,
  TableAnswerStream,
  type AxisItem,
  type CrosstabError,
  type DisplayOptions,
  type TableQuery,
  type TableResult,
} from '../index.js';
import { negotiateFormat, PPTX_TYPE, XLSX_TYPE } from './accept.js';
import { wholeStream, type ResponseStream } from './answer-budget.js';
import { expandRequestAudiences, type RequestExpression } from './audience-expansion.js';
import { authorize, entitledToSurvey } from './auth.js';
import type { CrosstabDataset, HandlerRequest } from './handler-types.js';
import { headerOf } from './headers.js';
import type { OperationReply } from './operation-reply.js';
import type { AuthenticatedContext, RouteResult } from './route.js';
import { fromEngineError, isServiceError, quote, serviceError, statusOf, type ServiceError } from './service-error.js';
import type { TableLimits } from './table-limits.js';
import { validateTablesRequest, type TableAxisItem, type TablesRequest } from './tables-request.js';
import { formatNumber } from '../text/number-text.js';

export { DEFAULT_TABLE_LIMITS, MAX_TABLE_CELLS, type TableLimits } from './table-limits.js';

/** The request field and words of each limit, in refusals. */
const LIMIT_NAMES: Record<string, { field: string; words: string }> = {
  'limits.comparisons': { field: 'Statistics', words: 'comparisons' },
  'limits.raoScottCovariance': { field: 'Statistics', words: 'raoScottCovariance' },
  'limits.answerBytes': { field: 'Statistics', words: 'answerBytes' },
  chart: { field: 'Rows', words: 'chart bars' },
};

/** Most cells (rows x columns) of a table answered as a PowerPoint deck: its slides' native tables and charts hold every one. */
export const MAX_DECK_CELLS = 20_000;

const CSV_TYPE = 'text/csv; charset=utf-8';

/**
 * POST /tables' check of the Accept header, from the headers alone (after the caller, before
 * the body): JSON, CSV or an XLSX workbook, else 406.
 */
export function tablesAccept(request: HandlerRequest): ServiceError | undefined {
  if (negotiateFormat(headerOf(request.headers, 'accept')) !== undefined) return undefined;
  return serviceError('not_acceptable', `POST /tables answers in application/json, text/csv, ${XLSX_TYPE} or ${PPTX_TYPE}.`, `Send \`Accept: application/json\`, \`Accept: text/csv\`, \`Accept: ${XLSX_TYPE}\` or \`Accept: ${PPTX_TYPE}\`.`);
}

/** The download name of a table deck: `<SurveyCode>-table.pptx`. */
export function deckFileName(survey: string): string {
  return workbookFileName(survey).replace(/\.xlsx$/, '.pptx');
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
  entry.datasetVersion = dataset.info.checksum;
  if (dataset.table === undefined) {
    return serviceError('not_found', `Survey ${body.SurveyCode} is served for POST /crosstab only, not for tables.`, 'Use POST /crosstab, or ask the provider to serve the survey as a dataset that makes tables.', 'SurveyCode');
  }
  const access = authorize(key, dataset.info, body.AuthorizationGroup);
  if (isServiceError(access)) return access;
  const catalog = `${basePath}/surveys/${encodeURIComponent(body.SurveyCode)}`;
  const axes = checkAxes(body, dataset, access.allowedGroups, catalog, service.tables.limits);
  if (isServiceError(axes)) return axes;
  // JSON and CSV give each entry's expression beside its label; XLSX and PowerPoint show the label alone.
  const base = await expandTableAudiences(context, dataset, access.allowedGroups, body.PopulationBaseCode, axes, catalog, format === 'json' || format === 'csv');
  if (isServiceError(base)) return base;

  const limits = service.tables.limits;
  const ahead = workAhead(body, axes.sizes, limits) ?? (format === 'pptx' ? deckAhead(axes.sizes) : undefined);
  if (ahead !== undefined) return ahead;
  // A deck charts the vertical %: it is computed with whatever else is asked.
  const stats = format === 'pptx' ? STAT_NAMES.filter((name) => name === 'vpct' || body.Statistics.includes(name)) : body.Statistics;
  const signal = request.signal;
  const gone = (): ServiceError => serviceError('client_closed_request', 'The client closed the connection before the table was answered; nothing was billed.', 'Wait for the answer.');

  // One account's tables wait for one another, never for everyone's (FairShare).
  const account = key.accountId ?? key.id;
  let outcome: { result: TableResult; answer: Uint8Array | TableAnswerStream } | ServiceError;
  try {
    outcome = await service.tables.fairShare.run(
      account,
      async () => {
        const query: TableQuery = {
          base,
          rows: axes.rows,
          columns: axes.columns,
          // As the library: "No answer" entries shown unless Missing is "hide"; percentages of the total unless PercentBase is "valid".
          missing: body.Missing ?? 'show',
          percentBase: body.PercentBase ?? 'total',
          ...(body.Weight === undefined ? {} : { weight: body.Weight }),
          ...(body.ColumnGroups === undefined ? {} : { columnGroups: body.ColumnGroups }),
          ...(access.allowedGroups === undefined ? {} : { allowedGroups: access.allowedGroups }),
          ...(signal === undefined ? {} : { signal }),
        };
        const result = await dataset.table!(query);
        // Statistics and the answer's bytes on a worker thread, bounded by the limits before they start.
        const answer = await service.tables.renderer.stream(
          result,
          {
            format,
            ...(stats.length === 0 ? {} : { statistics: { stats } }),
            limits: { comparisons: limits.comparisons, raoScottCovariance: limits.raoScottCovariance },
            maxBytes: limits.answerBytes,
            ...(format === 'xlsx' || format === 'pptx' ? { display: displayOf(dataset) } : {}),
            ...(format === 'json' ? { jsonPrefix: `{"ResultCode":0,"ResultDescription":"","SurveyCode":${JSON.stringify(body.SurveyCode)},"AudienceReportUnits":${JSON.stringify(result.units)},"Table":`, jsonSuffix: '}' } : {}),
          },
          signal,
        );
        return { result, answer };
      },
      signal,
    );
  } catch (error) {
    if (signal?.aborted) return gone();
    if (!isCrosstabError(error)) throw error;
    return fromTableError(error, catalog, body.SurveyCode);
  }
  if (isServiceError(outcome)) return outcome;
  const { result, answer } = outcome;
  if (signal?.aborted) {
    if (answer instanceof TableAnswerStream) answer.cancel();
    return gone();
  }
  // Its share of the answer bytes the server holds at once (a stream's window, a workbook whole), or 503.
  const release = service.tables.answers.take(answer instanceof TableAnswerStream ? Math.min(answer.byteLength, STREAM_BYTES_IN_FLIGHT) : answer.byteLength);
  if (release === undefined) {
    if (answer instanceof TableAnswerStream) answer.cancel();
    return {
      ...serviceError('unavailable', `The server is sending as many table answers as it holds at once (${formatNumber(service.tables.answers.maxBytes, 0)} bytes); nothing was billed.`, "Retry after the Retry-After header's seconds."),
      retryAfterSeconds: 1,
    };
  }
  let stream: ResponseStream;
  if (answer instanceof TableAnswerStream) {
    answer.onClose(release);
    stream = answer;
  } else {
    stream = wholeStream(answer, release);
  }
  let reply: OperationReply;
  if (format === 'xlsx') {
    // Made whole before anything is sent or billed: a workbook that cannot be written is an error, never part of a file.
    reply = { status: 200, headers: { 'content-type': XLSX_TYPE, 'content-disposition': `attachment; filename="${workbookFileName(body.SurveyCode)}"` }, body: stream };
  } else if (format === 'pptx') {
    reply = { status: 200, headers: { 'content-type': PPTX_TYPE, 'content-disposition': `attachment; filename="${deckFileName(body.SurveyCode)}"` }, body: stream };
  } else if (format === 'csv') {
    reply = { status: 200, headers: { 'content-type': CSV_TYPE }, body: stream };
  } else {
    reply = { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: stream };
  }
  return { body: reply, usage: { survey: body.SurveyCode, targets: result.rows.length + result.columns.length, operation: 'table' } };
}

/**
 * The base and the axes' expressions with their audiences expanded (axes changed in place):
 * an entry written with `@name` and no label has the expanded text as its expression and,
 * when `keepWritten` (an answer that gives every expression beside its label), what was
 * written as its label; otherwise (XLSX, PowerPoint: labels alone) the expanded text, which
 * reads back to the same respondents without the account's audiences, as a tab book's
 * headings. Returns the base, or the refusal.
 */
async function expandTableAudiences(context: AuthenticatedContext, dataset: CrosstabDataset, allowedGroups: readonly string[] | undefined, base: string, axes: { rows: AxisItem[]; columns: AxisItem[] }, catalog: string, keepWritten: boolean): Promise<string | ServiceError> {
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
    if (text !== item.expr) items[index] = item.label !== undefined ? { expr: text, label: item.label } : keepWritten ? { expr: text, label: item.expr } : { expr: text };
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

/** Per axis, each entry's size: the values of a whole variable, or 0 for an expression (one entry, in no compared group). */
interface AxisSizes {
  rows: number[];
  columns: number[];
  rowCount: number;
  columnCount: number;
}

/**
 * The axes as table() takes them, after checking that every whole variable is one the
 * caller may see (so an unknown name is suggested only among those) and that the table,
 * expanded, has at most `limits.cells` cells.
 */
function checkAxes(body: TablesRequest, dataset: CrosstabDataset, allowed: readonly string[] | undefined, catalog: string, limits: TableLimits): { rows: AxisItem[]; columns: AxisItem[]; sizes: AxisSizes } | ServiceError {
  const mine = dataset.info.variables.filter((variable) => allowed === undefined || allowed.includes(variable.group));
  const sizes: AxisSizes = { rows: [], columns: [], rowCount: 0, columnCount: 0 };
  const convert = (items: TableAxisItem[], field: 'Rows' | 'Columns'): AxisItem[] | ServiceError => {
    const converted: AxisItem[] = [];
    const entries = field === 'Rows' ? sizes.rows : sizes.columns;
    for (const [i, item] of items.entries()) {
      if ('Expression' in item) {
        converted.push(item.Label === undefined ? { expr: item.Expression } : { expr: item.Expression, label: item.Label });
        entries.push(0);
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
      entries.push(variable.values.length);
    }
    return converted;
  };
  const rows = convert(body.Rows, 'Rows');
  if (isServiceError(rows)) return rows;
  const columns = convert(body.Columns, 'Columns');
  if (isServiceError(columns)) return columns;
  const count = (entries: number[]) => entries.reduce((sum, size) => sum + Math.max(1, size), 0);
  sizes.rowCount = count(sizes.rows);
  sizes.columnCount = count(sizes.columns);
  const cells = sizes.rowCount * sizes.columnCount;
  if (cells > limits.cells) {
    return serviceError('invalid_request', `The table has ${sizes.rowCount} rows x ${sizes.columnCount} columns = ${cells} cells; at most ${limits.cells} are allowed.`, 'Split the table into several requests.', 'Rows');
  }
  return { rows, columns, sizes };
}

/**
 * Refuses, before any work, a table whose statistics would pass a limit, counted from the
 * catalog's values (each whole variable is one compared group; a "No answer" entry would
 * add no pair): `sig` compares every pair of one column variable's values in every row;
 * `chisq` tests every row variable against every column variable, over their cells squared.
 * The worker checks the exact counts again before it computes.
 */
function workAhead(body: TablesRequest, sizes: AxisSizes, limits: TableLimits): ServiceError | undefined {
  const refuse = (message: string, hint: string) => serviceError('invalid_request', message, hint, 'Statistics');
  if (body.Statistics.includes('sig')) {
    const pairs = sizes.columns.reduce((sum, k) => sum + (k * (k - 1)) / 2, 0);
    const comparisons = sizes.rowCount * pairs;
    if (comparisons > limits.comparisons) {
      const widest = Math.max(...sizes.columns);
      return refuse(
        `Significance letters (sig) on this table compare ${formatNumber(comparisons, 0)} pairs of columns (${sizes.rowCount} rows x ${formatNumber(pairs, 0)} pairs within the column variables); at most ${formatNumber(limits.comparisons, 0)} are allowed (the comparisons limit).`,
        `A column variable of k values makes k(k-1)/2 pairs in every row${widest > 1 ? ` (the largest here has ${widest} values)` : ''}: leave "sig" out of Statistics, put fewer rows in the table, or compare fewer values (expressions such as "age=18..34" instead of a whole variable).`,
      );
    }
  }
  if (body.Statistics.includes('chisq')) {
    let covariance = 0;
    let largest = 0;
    for (const r of sizes.rows) {
      for (const c of sizes.columns) {
        if (r < 2 || c < 2) continue;
        covariance += r * c * r * c;
        largest = Math.max(largest, r * c);
      }
    }
    if (covariance > limits.raoScottCovariance) {
      return refuse(
        `The Rao-Scott tests (chisq) of this table need ${formatNumber(covariance, 0)} covariance entries (each test's cells squared; the largest test has ${formatNumber(largest, 0)} cells); at most ${formatNumber(limits.raoScottCovariance, 0)} are allowed (the raoScottCovariance limit).`,
        `Leave "chisq" out of Statistics, or test variables with fewer values (at most ${formatNumber(Math.floor(Math.sqrt(limits.raoScottCovariance)), 0)} cells in one test).`,
      );
    }
  }
  return undefined;
}

/**
 * Refuses, before any work, a table too large for a deck: more than MAX_DECK_CELLS cells, or
 * a slide whose chart would have more than CHART_MAX_BARS bars (a row variable's values, or a
 * run of expression rows, times the columns; a "No answer" entry counted in).
 */
function deckAhead(sizes: AxisSizes): ServiceError | undefined {
  const cells = sizes.rowCount * sizes.columnCount;
  if (cells > MAX_DECK_CELLS) {
    return serviceError('invalid_request', `A deck of this table would hold ${formatNumber(cells, 0)} cells; at most ${formatNumber(MAX_DECK_CELLS, 0)} are allowed in a PowerPoint answer.`, 'Ask for fewer rows or columns, or the XLSX or JSON format.', 'Rows');
  }
  const columns = sizes.columns.reduce((sum, size) => sum + (size === 0 ? 1 : size + 1), 0);
  let run = 0;
  const panels: number[] = [];
  for (const size of sizes.rows) {
    if (size === 0) run++;
    else {
      if (run > 0) panels.push(run);
      run = 0;
      panels.push(size + 1);
    }
  }
  if (run > 0) panels.push(run);
  const widest = Math.max(0, ...panels) * columns;
  if (widest > CHART_MAX_BARS) {
    return serviceError('invalid_request', `A slide of this table would chart up to ${formatNumber(widest, 0)} bars; at most ${formatNumber(CHART_MAX_BARS, 0)} are allowed on one chart.`, 'Chart fewer row categories or columns: put fewer values in a row variable or fewer columns in the table.', 'Rows');
  }
  return undefined;
}

/** The engine names the table's parts `base`, `rows[i]`, `columns[i]`, `weight`; the API calls them differently. */
function tableFieldOf(engineField: unknown): { field: string; label: string } | undefined {
  if (engineField === 'base') return { field: 'PopulationBaseCode', label: 'PopulationBaseCode' };
  if (engineField === 'weight') return { field: 'Weight', label: 'Weight' };
  const groups = typeof engineField === 'string' ? /^columnGroups(\[\d+\])?/.exec(engineField) : null;
  if (groups !== null) return { field: 'ColumnGroups', label: `ColumnGroups${groups[1] ?? ''}` };
  const axis = typeof engineField === 'string' ? /^(rows|columns)(\[\d+\])?/.exec(engineField) : null;
  if (axis === null) return undefined;
  const field = axis[1] === 'rows' ? 'Rows' : 'Columns';
  return { field, label: `${field}${axis[2] ?? ''}` };
}

/**
 * An engine error of table() or its statistics as a service error naming the request field;
 * a fault of the server or of the survey's data (5xx) keeps its own words, which name no file.
 */
export function fromTableError(error: CrosstabError, catalog: string, survey: string): ServiceError {
  const limit = typeof error.details.field === 'string' ? LIMIT_NAMES[error.details.field] : undefined;
  if (limit !== undefined) {
    const message = error.message.charAt(0).toUpperCase() + error.message.slice(1);
    return serviceError('invalid_request', `${message} (the ${limit.words} limit).`, error.details.hint ?? 'Ask for a smaller table or fewer statistics.', limit.field);
  }
  // A table answer that outgrew its worker's memory: the request asked too much, the server is fine.
  if (error.code === ErrorCode.outOfMemory) return serviceError('invalid_request', `The table is too large to answer: ${error.message}.`, error.details.hint ?? 'Ask for fewer cells or fewer statistics.', 'Statistics');
  const where = tableFieldOf(error.details.field);
  const mapped = fromEngineError(error, catalog, survey);
  if (where === undefined || statusOf(mapped) >= 500) return mapped;
  return { ...mapped, message: `${where.label}: ${error.details.problem ?? error.message}`, field: where.field };
}
