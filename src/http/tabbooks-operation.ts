/**
 * POST /tabbooks: a tab book (one banner across one table per stub variable) as the XLSX
 * `crosstab tabbook` writes, within the caller's surveys and groups; bounded by the table
 * limits before any table is computed; billed once (operation `tabbook`, targets = its
 * number of tables).
 */
import { isCrosstabError, STAT_NAMES, tabbook, tabbookSize, type CrosstabError, type StatName, type TableQuery, type TabbookSize } from '../index.js';
import { XLSX_TYPE } from './accept.js';
import { expandRequestAudiences, type RequestExpression } from './audience-expansion.js';
import { authorize, entitledToSurvey } from './auth.js';
import { headerOf } from './headers.js';
import type { HandlerRequest } from './handler-types.js';
import type { AuthenticatedContext, RouteResult } from './route.js';
import { isServiceError, quote, serviceError, statusOf, type ServiceError } from './service-error.js';
import { fromTableError } from './tables-operation.js';
import { formatNumber } from '../text/number-text.js';

/** A POST /tabbooks body. */
export interface TabbooksRequest {
  SurveyCode: string;
  AuthorizationGroup?: string;
  PopulationBaseCode?: string;
  /** Banner entries: variables (a column per value), codebook codes or expressions (a column each). */
  Banner: string[];
  /** Stub variables (a table each), or "all": every variable of the caller's groups with a value list. */
  Stubs: string[] | 'all';
  Weight?: string | null;
  Statistics?: StatName[];
  Missing?: 'show' | 'hide';
}

const FIELDS = ['SurveyCode', 'AuthorizationGroup', 'PopulationBaseCode', 'Banner', 'Stubs', 'Weight', 'Statistics', 'Missing'];

/** Accept: the XLSX workbook only. */
export function tabbooksAccept(request: HandlerRequest): ServiceError | undefined {
  const accept = headerOf(request.headers, 'accept') ?? '*/*';
  if (accept.split(',').some((part) => [XLSX_TYPE, '*/*', 'application/*'].includes(part.split(';')[0]!.trim()))) return undefined;
  return serviceError('not_acceptable', `POST /tabbooks answers in ${XLSX_TYPE}.`, `Send \`Accept: ${XLSX_TYPE}\`.`);
}

function validate(json: unknown): TabbooksRequest | ServiceError {
  const bad = (field: string, message: string, hint: string) => serviceError('invalid_request', `${field}: ${message}`, hint, field);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return serviceError('invalid_request', 'The body must be a JSON object.', 'Send e.g. {"SurveyCode":"GSS","Banner":["sex"],"Stubs":"all"}.');
  const body = json as Record<string, unknown>;
  const extra = Object.keys(body).find((key) => !FIELDS.includes(key));
  if (extra !== undefined) return bad(extra, 'is not a field of a tab book request', `Fields: ${FIELDS.join(', ')}.`);
  if (typeof body['SurveyCode'] !== 'string' || body['SurveyCode'] === '') return bad('SurveyCode', 'must be a survey code', 'e.g. "GSS".');
  for (const field of ['AuthorizationGroup', 'PopulationBaseCode'] as const) if (body[field] !== undefined && (typeof body[field] !== 'string' || body[field] === '')) return bad(field, 'must be a non-empty string', field === 'PopulationBaseCode' ? 'e.g. "*" or "year=2024".' : 'Leave it out for all of your groups.');
  const banner = body['Banner'];
  if (!Array.isArray(banner) || banner.length === 0 || banner.length > 100 || banner.some((item) => typeof item !== 'string' || item.trim() === '' || item.length > 2000)) return bad('Banner', 'must be a list of 1 to 100 variables, codes or expressions', 'e.g. ["sex", "race", "degree=3,4"].');
  const stubs = body['Stubs'];
  if (stubs !== 'all' && (!Array.isArray(stubs) || stubs.length === 0 || stubs.length > 1000 || stubs.some((item) => typeof item !== 'string' || item === ''))) return bad('Stubs', 'must be "all" or a list of 1 to 1,000 variables', 'e.g. ["degree", "relig"] or "all".');
  if (body['Weight'] !== undefined && body['Weight'] !== null && typeof body['Weight'] !== 'string') return bad('Weight', 'must be a weight column or null (unweighted)', 'Leave it out for the survey\'s first weight.');
  const stats = body['Statistics'];
  if (stats !== undefined && (!Array.isArray(stats) || stats.some((name) => !STAT_NAMES.includes(name as StatName)))) return bad('Statistics', `must be a list of ${STAT_NAMES.join(', ')}`, 'e.g. ["vpct", "sig"].');
  if (body['Missing'] !== undefined && body['Missing'] !== 'show' && body['Missing'] !== 'hide') return bad('Missing', 'must be "show" or "hide"', 'Leave it out to show the "No answer" rows and columns.');
  return body as unknown as TabbooksRequest;
}

export async function tabbooksOperation(context: AuthenticatedContext): Promise<RouteResult> {
  const { caller: key, entry, service, request } = context;
  const body = validate(context.json);
  if ('code' in body) return body;
  entry.survey = body.SurveyCode.slice(0, 64);
  const visible = (): string[] => [...service.surveys.keys()].filter((survey) => entitledToSurvey(key, survey));
  if (!entitledToSurvey(key, body.SurveyCode)) return serviceError('forbidden_survey', `This API key is not entitled to survey ${quote(body.SurveyCode)}.`, `The key is entitled to: ${visible().join(', ') || 'no survey served here'}.`, 'SurveyCode');
  const dataset = service.surveys.get(body.SurveyCode);
  if (dataset === undefined) return serviceError('unknown_survey', `No survey ${quote(body.SurveyCode)} is served here.`, `Use one of: ${visible().join(', ')}.`, 'SurveyCode');
  entry.datasetVersion = dataset.info.checksum;
  const table = dataset.table?.bind(dataset);
  if (table === undefined) return serviceError('not_found', `Survey ${body.SurveyCode} is served for POST /crosstab only, not for tab books.`, 'Use POST /crosstab.', 'SurveyCode');
  const access = authorize(key, dataset.info, body.AuthorizationGroup);
  if ('code' in access) return access;
  const catalog = `${service.basePath}/surveys/${encodeURIComponent(body.SurveyCode)}`;
  const allowed = access.allowedGroups;
  const mine = dataset.info.variables.filter((variable) => allowed === undefined || allowed.includes(variable.group));
  // Names of another group are unknown names, as made-up ones (the engine checks expressions with the same groups).
  const stubs = body.Stubs === 'all' ? mine.filter((variable) => variable.values !== undefined).map((variable) => variable.name) : body.Stubs;
  if (stubs.length === 0) return serviceError('invalid_request', 'Stubs: "all" found no variable of your groups with a value list.', 'Name stub variables instead.', 'Stubs');
  const values = new Map(mine.map((variable) => [variable.name, variable.values?.length]));
  for (const [i, stub] of stubs.entries()) {
    if (!values.has(stub)) return serviceError('unknown_variable', `Stubs[${i}]: unknown variable ${quote(stub)}.`, `GET ${catalog} lists the variables your key may use.`, 'Stubs');
  }
  for (const [i, item] of body.Banner.entries()) {
    const variable = dataset.info.variables.find((candidate) => candidate.name === item);
    if (variable !== undefined && !values.has(item)) return serviceError('unknown_variable', `Banner[${i}]: unknown variable ${quote(item)}.`, `GET ${catalog} lists the variables your key may use.`, 'Banner');
  }

  // Saved audiences (`@name`) in the base and the banner, as POST /tables expands them: a banner
  // entry written with `@name` is the expanded text, headed by it as `crosstab tabbook` heads it
  // (the workbook shows no expression beside a heading: `@name` would not read back without the
  // account's audiences, nor after the audience is edited).
  let base = body.PopulationBaseCode ?? '*';
  let banner: string[] = body.Banner;
  if (base.includes('@') || body.Banner.some((item) => item.includes('@'))) {
    const expressions: RequestExpression[] = [
      { text: base, field: 'PopulationBaseCode', label: 'PopulationBaseCode' },
      ...body.Banner.map((text, i) => ({ text, field: 'Banner', label: `Banner[${i}]` })),
    ];
    const expanded = await expandRequestAudiences({ store: service.audiences, caller: key, dataset, allowedGroups: allowed, expressions, catalog });
    if (isServiceError(expanded)) return expanded;
    base = expanded[0]!;
    banner = body.Banner.map((_, i) => expanded[i + 1]!);
  }
  // Bounded before any table starts, as one table of all the stubs' rows would be: its cells
  // counted as the library's maxCells counts them (tabbookSize), and sig's comparisons.
  const { limits } = service.tables;
  const missing = body.Missing ?? 'show';
  let size: TabbookSize;
  try {
    size = tabbookSize(dataset.info, { banner, stubs, missing });
  } catch (error) {
    if (!isCrosstabError(error)) throw error;
    return bookError(error, catalog, body.SurveyCode);
  }
  const { rows, columns, cells } = size;
  if (cells > limits.cells) {
    return serviceError('invalid_request', `The tab book has ${stubs.length} tables of ${rows} rows in all x ${columns} columns = ${cells} cells; at most ${limits.cells} are allowed (the cells limit of a table).`, 'Ask for fewer stubs or fewer banner columns, in several tab books.', 'Stubs');
  }
  const stats = body.Statistics ?? ['vpct', 'sig'];
  if (stats.includes('sig')) {
    const pairs = size.bannerColumns.reduce((sum, k) => sum + (k * (k - 1)) / 2, 0);
    if (rows * pairs > limits.comparisons) {
      return serviceError('invalid_request', `Significance letters (sig) on this tab book compare ${formatNumber(rows * pairs, 0)} pairs of columns; at most ${formatNumber(limits.comparisons, 0)} are allowed (the comparisons limit).`, 'Leave "sig" out of Statistics, or ask for fewer stubs or banner columns.', 'Statistics');
    }
  }
  const signal = request.signal;
  const account = key.accountId ?? key.id;
  let outcome: { bytes: Uint8Array; tables: number } | ServiceError;
  try {
    outcome = await service.tables.fairShare.run(
      account,
      async () => {
        // The tables on the dataset's pool, as POST /tables; the workbook on a worker thread.
        const book = await tabbook(
          { info: dataset.info, table: (query: TableQuery) => table(query) },
          {
            banner,
            stubs,
            base,
            stats,
            missing,
            maxCells: limits.cells,
            statistics: { limits: { comparisons: limits.comparisons, raoScottCovariance: limits.raoScottCovariance } },
            ...(body.Weight === undefined ? {} : { weight: body.Weight }),
            ...(allowed === undefined ? {} : { allowedGroups: allowed }),
            ...(signal === undefined ? {} : { signal }),
          },
        );
        return { bytes: await service.tables.renderer.renderTabbook(book, 'sheets', limits.answerBytes, signal), tables: book.tables.length };
      },
      signal,
    );
  } catch (error) {
    if (signal?.aborted) return serviceError('client_closed_request', 'The client closed the connection before the tab book was answered; nothing was billed.', 'Wait for the answer.');
    if (!isCrosstabError(error)) throw error;
    return bookError(error, catalog, body.SurveyCode);
  }
  if ('code' in outcome) return outcome;
  if (signal?.aborted) return serviceError('client_closed_request', 'The client closed the connection before the tab book was answered; nothing was billed.', 'Wait for the answer.');
  const { bytes, tables } = outcome;
  const name = `${body.SurveyCode.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64)}-tabbook.xlsx`;
  return { body: { status: 200, headers: { 'content-type': XLSX_TYPE, 'content-disposition': `attachment; filename="${name}"` }, body: bytes }, usage: { survey: body.SurveyCode, targets: tables, operation: 'tabbook' } };
}

/** A refusal of tabbook() in the request's words: `banner[1]` as Banner[1], `stubs[0]` as Stubs[0]. */
function bookError(error: CrosstabError, catalog: string, survey: string): ServiceError {
  const field = typeof error.details.field === 'string' ? error.details.field : '';
  const named = /^(banner|stubs)\[(\d+)\]/.exec(field);
  const mapped = fromTableError(error, catalog, survey);
  if (named === null || statusOf(mapped) >= 500) return mapped;
  const label = named[1] === 'banner' ? 'Banner' : 'Stubs';
  return { ...mapped, message: `${label}[${named[2]}]: ${error.details.problem ?? error.message}`, field: label };
}
