/**
 * The one error class of crosstab-engine. Identify errors by `code`, never by message text.
 * Messages say what was wrong, where (file:line, field, option) and what to do.
 */
import { formatNumber } from './text/number-text.js';
export const ErrorCode = {
  /** An option passed to an API function or CLI flag is invalid. */
  invalidOption: 'invalid_option',
  /** An input file (CSV, codebook) does not exist or cannot be read. */
  fileNotFound: 'file_not_found',
  /** Input data is malformed: ragged row, duplicate header, empty file, bad weight... */
  invalidInput: 'invalid_input',
  /** The codebook JSON is malformed or refers to unknown variables. */
  invalidCodebook: 'invalid_codebook',
  /** A dataset file is truncated, corrupt or fails its checksum. */
  corruptDataset: 'corrupt_dataset',
  /** A dataset file was written by an incompatible version of the format. */
  unsupportedVersion: 'unsupported_version',
  /** An expression does not follow the grammar. */
  invalidExpression: 'invalid_expression',
  /** An expression names a variable the dataset does not have. */
  unknownVariable: 'unknown_variable',
  /** An expression names a value no respondent has. */
  unknownValue: 'unknown_value',
  /** An expression names a codebook code the dataset does not define. */
  unknownCode: 'unknown_code',
  /** An expression names a saved audience (`@name`) that is not there for the caller. */
  unknownAudience: 'unknown_audience',
  /**
   * An expression touches an authorization group the caller may not use. Not thrown since
   * `allowedGroups` refuses another group's names as unknown (which names nothing of that
   * group); kept so that code matching it still compiles.
   */
  forbiddenGroup: 'forbidden_group',
  /** The query or build was cancelled through its AbortSignal. */
  cancelled: 'cancelled',
  /** Kernel memory (4 GiB per process) cannot hold what the operation needs. */
  outOfMemory: 'out_of_memory',
  /** A file or database is held by another process (a lock file that is not stale). */
  locked: 'locked',
  /** A worker thread failed while running a query. */
  workerFailed: 'worker_failed',
  /** The dataset was closed. */
  closed: 'dataset_closed',
  /** A remote backend (ClickHouse) is unreachable or failed a query. */
  backendUnavailable: 'backend_unavailable',
  /**
   * The access store (the accounts, keys and usage database) cannot be reached, did not
   * answer in time, or lost its files: nothing that needs it can be done now.
   */
  storeUnavailable: 'store_unavailable',
  /** A bug: an invariant of the engine did not hold. */
  internal: 'internal',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ErrorDetails {
  /** Input file, when the error is about a file. */
  file?: string;
  /** 1-based line number in `file`. */
  line?: number;
  /** The option, request field, column or variable at fault. */
  field?: string;
  /** Near matches for an unknown name or value. */
  suggestions?: string[];
  /** Advice on how to fix it (shown to API clients as `hint`). */
  hint?: string;
  /**
   * Options the hint names, in the library's words and in backquotes (`maxIterations`): a
   * front end shows the hint with its own names for them (labelledHint(): the CLI's
   * --max-iterations).
   */
  hintOptions?: string[];
  /**
   * What the dataset's description lists for the caller to choose from, when the hint does
   * not name the choices itself; each front end says where its users find that list.
   */
  listed?: 'variables' | 'values' | 'value labels' | 'codes';
  /** 0-based character offset in an expression. */
  position?: number;
  /** The ids of the saved audiences at fault: a loop of audiences using each other, in order. */
  audiences?: string[];
  /**
   * The message without the `field` it starts with (`must be a non-empty string`), for
   * callers that name the field their own way (the REST adapter, the CLI's flags).
   */
  problem?: string;
  [key: string]: unknown;
}

/**
 * The brand on every CrosstabError's prototype. A process can load the package twice (its
 * ESM and its CommonJS build, or two copies in node_modules): each has its own class, and
 * the brand, a registered symbol, is what they have in common.
 */
const BRAND = Symbol.for('crosstab-engine.error');

/**
 * The error of every crosstab-engine function. `instanceof CrosstabError` and
 * isCrosstabError() also recognise errors of another copy of the package (ESM vs CommonJS).
 */
export class CrosstabError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = 'CrosstabError';
    this.code = code;
    this.details = details;
  }

  /** Plain form for postMessage / JSON: a subclass does not survive structured clone. */
  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }

  static fromJSON(value: { code: ErrorCode; message: string; details?: ErrorDetails }): CrosstabError {
    // Not `new CrosstabError`: naming the class inside its own body makes the bundler rename
    // it (`class _CrosstabError`), and the constructor's name is what stack traces and logs show.
    return rebuild(value);
  }

  /** True for an error of this class or of another copy of the package (see BRAND). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

Object.defineProperty(CrosstabError.prototype, BRAND, { value: true });

function rebuild(value: { code: ErrorCode; message: string; details?: ErrorDetails }): CrosstabError {
  return new CrosstabError(value.code, value.message, value.details ?? {});
}

/** True for a CrosstabError, also one thrown by another copy of the package (its ESM or CommonJS build). */
export function isCrosstabError(value: unknown): value is CrosstabError {
  return value instanceof CrosstabError;
}

/**
 * An error about `field` whose message starts with it: `${field}${separator}${problem}`,
 * with `details.field` and `details.problem` set, so a caller can re-label the field
 * without matching the message text.
 */
export function fieldError(code: ErrorCode, field: string, problem: string, details: ErrorDetails = {}, separator = ' '): CrosstabError {
  return new CrosstabError(code, `${field}${separator}${problem}`, { ...details, field, problem });
}

/** Most characters of one input (an expression, a name, a path) that a message repeats. */
export const ECHO_LIMIT = 200;

/**
 * `text` as a message repeats it: whole up to ECHO_LIMIT characters, else its start, an
 * ellipsis and its length, so a 100,000-character expression does not land whole in logs
 * and API bodies.
 */
export function echo(text: string): string {
  if (text.length <= ECHO_LIMIT) return text;
  return `${text.slice(0, ECHO_LIMIT)}… (${formatNumber(text.length, 0)} characters)`;
}

/** `cancelled`: `what` (`the query`, `the build`) was stopped through its AbortSignal. */
export function cancelledError(what: string, hint = 'Run it again without aborting its signal.'): CrosstabError {
  return new CrosstabError(ErrorCode.cancelled, `${what} was cancelled`, { hint });
}

/** Rejects with {@link cancelledError} once `signal` is aborted. */
export function throwIfCancelled(signal: AbortSignal | undefined, what: string, hint?: string): void {
  if (signal?.aborted) throw cancelledError(what, hint);
}

/** Another field named inside a problem's text: `field` at character `at` of `details.problem`. */
export interface FieldMention {
  field: string;
  at: number;
}

/** A problem's text with the other fields it names marked, so a front end can label those too. */
export interface ProblemText {
  text: string;
  mentions: FieldMention[];
}

/** Marks a field named inside a problem: problemText`must be after ${mention('from')}`. */
export function mention(field: string): { mention: string } {
  return { mention: field };
}

/** A problem's text whose `mention(field)` parts are other fields, by their library names. */
export function problemText(strings: TemplateStringsArray, ...parts: unknown[]): ProblemText {
  let text = strings[0] ?? '';
  const mentions: FieldMention[] = [];
  parts.forEach((part, index) => {
    if (typeof part === 'object' && part !== null && typeof (part as { mention?: unknown }).mention === 'string') {
      const field = (part as { mention: string }).mention;
      mentions.push({ field, at: text.length });
      text += field;
    } else {
      text += String(part);
    }
    text += strings[index + 1] ?? '';
  });
  return { text, mentions };
}

/**
 * An error's hint with the options it names (`details.hintOptions`, each written in backquotes
 * in the hint) named the way a front end names them: `label(option)`; unchanged otherwise.
 */
export function labelledHint(error: { details: ErrorDetails }, label: (field: string) => string | undefined): string | undefined {
  const { hint, hintOptions } = error.details;
  if (typeof hint !== 'string' || !Array.isArray(hintOptions)) return hint;
  let text = hint;
  for (const option of hintOptions) {
    const name = typeof option === 'string' ? label(option) : undefined;
    if (name !== undefined) text = text.split(`\`${option}\``).join(name);
  }
  return text;
}

/**
 * An error's message with its fields named the way a front end names them: `label(field)` (a
 * CLI flag, a form label) in place of the library's own names, for an error made by
 * fieldError(), the field it is about and the fields its problem mentions
 * (`details.mentions`). The message unchanged when `label` knows no name for the field.
 */
export function labelledMessage(error: CrosstabError, label: (field: string) => string | undefined): string {
  const { field, problem, mentions } = error.details;
  const name = typeof field === 'string' ? label(field) : undefined;
  if (name === undefined || typeof problem !== 'string') return error.message;
  let text = problem;
  if (Array.isArray(mentions)) {
    for (const { field: other, at } of [...(mentions as FieldMention[])].sort((x, y) => y.at - x.at)) {
      if (problem.startsWith(other, at)) text = `${text.slice(0, at)}${label(other) ?? other}${text.slice(at + other.length)}`;
    }
  }
  // Keep fieldError()'s separator (`' '`, `': '`) between the field and its problem.
  const { message } = error;
  const at = message.length - problem.length;
  const separator = message.startsWith(field as string) && message.endsWith(problem) && at >= (field as string).length ? message.slice((field as string).length, at) : ' ';
  return `${name}${separator}${text}`;
}
