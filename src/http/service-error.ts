import { isCrosstabError, type CrosstabError, type ErrorCode } from '../index.js';

/**
 * Every `error.code` the REST adapter returns, with its HTTP status. This is the only
 * code -> status table of crosstab-engine: HTTP statuses are chosen in src/http/ only.
 */
export const serviceErrorStatus = {
  /** The body is empty, not UTF-8 or not JSON. */
  invalid_json: 400,
  /** The body is JSON but not a CrosstabRequest: not an object, a field missing, of the wrong type or unknown. */
  invalid_request: 400,
  /** TargetCodes is missing, not an array of strings, or has fewer than 1 or more than 2 items. */
  invalid_target_codes: 400,
  /** PopulationBaseCode or a target code does not follow the expression grammar. */
  invalid_expression: 400,
  /** An expression names a variable the survey does not have. */
  unknown_variable: 400,
  /** An expression names a value no respondent of the survey has. */
  unknown_value: 400,
  /** An expression names a segment code the survey does not define. */
  unknown_code: 400,
  /** An expression names a saved audience (`@name`) that is not there for the caller (theirs or shared in their account, of this survey). */
  unknown_audience: 400,
  /** An audience of that name already exists where the new one would go. */
  conflict: 409,
  /** SurveyCode names no survey served here (only for keys entitled to every survey). */
  unknown_survey: 400,
  /** AuthorizationGroup names no group of the survey. */
  unknown_authorization_group: 400,
  /** The Service-Engine-Authorizer key is missing, malformed, unknown, expired or revoked. */
  unauthorized: 401,
  /** The key is valid but not entitled to the survey or authorization group. */
  forbidden_survey: 403,
  /** No operation at this path. */
  not_found: 404,
  /** The path exists but not with this method. */
  method_not_allowed: 405,
  /** The body the answer needs did not arrive within the body timeout, or the whole request not in time (`listen`). */
  request_timeout: 408,
  /** The body is larger than the configured limit. */
  payload_too_large: 413,
  /** The request headers are larger than the server accepts (node:http servers of `listen`). */
  request_header_too_large: 431,
  /** The account's request rate limit is used up for now (see Retry-After); not billed. */
  rate_limited: 429,
  /** The account's monthly quota of billed calls is used up (see Retry-After); not billed. */
  quota_exceeded: 429,
  /** Too many unknown, revoked or expired API keys from the caller's address (see Retry-After). */
  too_many_failed_keys: 429,
  /** Content-Type is not application/json (UTF-8). */
  unsupported_media_type: 415,
  /** The Accept header names no format the operation answers in (POST /tables: JSON or CSV). */
  not_acceptable: 406,
  /** Never sent: the client closed its connection before the answer (logged; nothing billed). */
  client_closed_request: 499,
  /** A bug in the service; the request id is in the X-Request-Id header. */
  internal: 500,
  /** The service is shutting down, cannot record usage or cannot reach its accounts database right now; retry later. */
  unavailable: 503,
  /** The survey's data on the server holds what the engine does not take (stored weights out of range): the provider must rebuild it. */
  dataset_unavailable: 503,
} as const;

export type ServiceErrorCode = keyof typeof serviceErrorStatus;
export type ServiceErrorStatus = (typeof serviceErrorStatus)[ServiceErrorCode];

/** Request fields an error can point at (`error.field`). */
export type RequestField =
  | 'SurveyCode'
  | 'AuthorizationGroup'
  | 'PopulationBaseCode'
  | 'TargetCodes'
  | (string & {});

/** An error answer: a value the handler returns, not an exception. */
export interface ServiceError {
  code: ServiceErrorCode;
  message: string;
  field?: RequestField;
  hint: string;
  /** Seconds for the Retry-After header (429, 503). */
  retryAfterSeconds?: number;
  /** For the server's log only, never the answer: the fault behind an `internal` or `dataset_unavailable` error (the engine's code and message). */
  cause?: string;
}

/** The body of every error: ResultCode = HTTP status, ResultDescription = message. */
export interface ServiceErrorBody {
  ResultCode: number;
  ResultDescription: string;
  error: { code: ServiceErrorCode; message: string; field?: string; hint: string };
}

export function serviceError(code: ServiceErrorCode, message: string, hint: string, field?: RequestField): ServiceError {
  return field === undefined ? { code, message, hint } : { code, message, field, hint };
}

export function isServiceError(value: unknown): value is ServiceError {
  return typeof value === 'object' && value !== null && 'code' in value && 'hint' in value && !(value instanceof Error);
}

export function statusOf(error: ServiceError): number {
  return serviceErrorStatus[error.code];
}

export function errorBody(error: ServiceError): ServiceErrorBody {
  const status = statusOf(error);
  const detail: ServiceErrorBody['error'] =
    error.field === undefined
      ? { code: error.code, message: error.message, hint: error.hint }
      : { code: error.code, message: error.message, field: error.field, hint: error.hint };
  return { ResultCode: status, ResultDescription: error.message, error: detail };
}

/** How long a client is told to wait (Retry-After) when the accounts database is unavailable. */
const STORE_RETRY_SECONDS = 5;

/**
 * 503 for a request that needs the accounts, keys and usage database while it cannot serve
 * (unreachable, too slow, its files lost): nothing was billed. The cause is the provider's
 * to see in its log, not the client's.
 */
export function storeUnavailable(): ServiceError {
  return {
    ...serviceError('unavailable', 'The service cannot reach its accounts database right now; the request was not billed.', 'Retry after the Retry-After header\'s seconds; if it persists, tell the provider.'),
    retryAfterSeconds: STORE_RETRY_SECONDS,
  };
}

/** The answer to an exception a store threw (a key store, a usage sink), if it has one other than 500. */
export function fromThrown(error: unknown): ServiceError | undefined {
  return isCrosstabError(error) && error.code === 'store_unavailable' ? storeUnavailable() : undefined;
}

/** Shortens client input echoed in messages so an error body never grows with the input. */
export function quote(value: string, max = 60): string {
  const shown = value.length > max ? `${value.slice(0, max)}...` : value;
  return JSON.stringify(shown);
}

/** The engine names expressions `base` and `targets[i]`; the API calls them differently. */
function requestFieldOf(engineField: unknown): { field: RequestField; label: string } | undefined {
  if (engineField === 'base') return { field: 'PopulationBaseCode', label: 'PopulationBaseCode' };
  const target = typeof engineField === 'string' ? /^targets\[(\d+)\]$/.exec(engineField) : null;
  if (target) return { field: 'TargetCodes', label: `TargetCodes[${target[1]}]` };
  return undefined;
}

/** What an engine error's mapping is given: the error, its message and hint in the API's words. */
interface EngineErrorText {
  error: CrosstabError;
  /** The request's SurveyCode, when the caller passed it. */
  survey: string | undefined;
  where: { field: RequestField; label: string } | undefined;
  message: string;
  hint: string | undefined;
  didYouMean: string;
}

type EngineErrorMapping = (text: EngineErrorText) => ServiceError;

/** A fault of the server or its data, not of the request: 500, with the request id to report. */
const internalError: EngineErrorMapping = ({ error }) => ({
  ...serviceError('internal', 'Internal error.', 'Retry later; if it persists, report the X-Request-Id response header to the provider.'),
  // The caller is told nothing of the server's files; the log says which one and what is wrong.
  cause: `${error.code}: ${error.message}`,
});
/**
 * The survey's stored data holds what the engine does not take (the first read of a file's
 * weights refuses weights outside its range): the client did nothing wrong and the server is
 * not broken, but this survey cannot answer until the provider rebuilds it. The message names
 * the survey, none of the server's files; the cause (file and reason) is for the log.
 */
const datasetUnavailable: EngineErrorMapping = ({ error, survey }) => ({
  ...serviceError(
    'dataset_unavailable',
    `Survey ${survey === undefined ? '' : `${quote(survey)} `}cannot be answered: its data on this server holds values the service cannot use. The request was not billed.`,
    'Tell the provider (with the X-Request-Id response header): the survey must be rebuilt before it answers again. Retrying does not help until then; other surveys are not affected.',
  ),
  cause: `${survey === undefined ? '' : `survey ${quote(survey)}: `}${error.code}: ${error.message}`,
});
const shuttingDown: EngineErrorMapping = () => serviceError('unavailable', 'The service is shutting down.', 'Retry the request in a few seconds.');
const unknownName: EngineErrorMapping = ({ error, message, hint, didYouMean, where }) =>
  serviceError(error.code as 'unknown_variable' | 'unknown_value' | 'unknown_code', message, (hint ?? 'Use a variable, value or code defined by the survey codebook.') + didYouMean, where?.field);

/**
 * The answer to each engine error code. Exhaustive by construction: a new library error code
 * does not compile until it is given its answer here (no default that turns it into a 500).
 */
export const engineErrorMappings = {
  // The request was validated already; an option the engine still refuses is client input.
  invalid_option: ({ message, hint, where }) => serviceError('invalid_request', message, hint ?? 'Check PopulationBaseCode and TargetCodes.', where?.field),
  invalid_expression: ({ message, hint, where }) => serviceError('invalid_expression', message, hint ?? 'Check the expression against the grammar in the API description (GET /docs).', where?.field),
  unknown_variable: unknownName,
  unknown_value: unknownName,
  unknown_code: unknownName,
  unknown_audience: ({ message, hint, where }) => serviceError('unknown_audience', message, hint ?? 'GET /v1/audiences lists the audiences you may use.', where?.field),
  forbidden_group: ({ message, hint, where }) =>
    serviceError('forbidden_survey', message, hint ?? 'Use only variables and codes of the authorization groups your key is entitled to, or ask for a key with more groups.', where?.field),
  cancelled: shuttingDown,
  dataset_closed: shuttingDown,
  // The server's memory, not the request, is at fault: a request of 1 or 2 targets is small.
  out_of_memory: () => serviceError('unavailable', 'The service is out of query memory right now.', 'Retry the request later; if it persists, tell the provider (the server holds too many or too large datasets).'),
  backend_unavailable: () => serviceError('unavailable', 'The data backend of this survey is unavailable.', 'Retry the request in a few seconds.'),
  store_unavailable: () => storeUnavailable(),
  // Faults of the served files or of the process, never of a query's input.
  file_not_found: internalError,
  // At query time only a served file's stored data is input: its weights, checked at their first read.
  invalid_input: datasetUnavailable,
  invalid_codebook: internalError,
  corrupt_dataset: internalError,
  unsupported_version: internalError,
  locked: internalError,
  worker_failed: internalError,
  internal: internalError,
} satisfies Record<ErrorCode, EngineErrorMapping>;

/**
 * Maps an engine error from `crosstab()` onto a service error, pointing `field` at the
 * request field holding the expression at fault and naming it in the message. `catalog` is
 * the path of the survey's GET /surveys/{SurveyCode}, which lists what the caller may use;
 * `survey` its SurveyCode, named by an answer about the survey's own data.
 */
export function fromEngineError(error: CrosstabError, catalog?: string, survey?: string): ServiceError {
  const where = requestFieldOf(error.details.field);
  const ownMessage = error.details.problem ?? error.message;
  const message = where ? `${where.label}: ${ownMessage}` : error.message;
  const listed = error.details.listed ? ` GET ${catalog ?? '/v1/surveys/{SurveyCode}'} lists the ${error.details.listed} your key may use.` : '';
  const hint = error.details.hint === undefined ? undefined : error.details.hint + listed;
  const suggestions = error.details.suggestions?.slice(0, 5) ?? [];
  const didYouMean = suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => JSON.stringify(s)).join(', ')}?` : '';
  // A code from a newer library than this adapter was compiled with is still a 500, not a throw.
  const mapping: EngineErrorMapping = Object.hasOwn(engineErrorMappings, error.code) ? engineErrorMappings[error.code] : internalError;
  return mapping({ error, survey, where, message, hint, didYouMean });
}
