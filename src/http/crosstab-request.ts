import { isUtf8 } from 'node:buffer';
import { quote, serviceError, type ServiceError } from './service-error.js';

/** The body of POST /crosstab, after validation. */
export interface CrosstabRequest {
  SurveyCode: string;
  /** Absent, null and `_ALL_` all mean every group the key is entitled to. */
  AuthorizationGroup?: string;
  PopulationBaseCode: string;
  TargetCodes: string[];
}

/** The value of AuthorizationGroup (and of a key's groups or surveys) meaning "all". */
export const ALL = '_ALL_';

/** Longest SurveyCode / AuthorizationGroup accepted. */
export const MAX_NAME_LENGTH = 128;
/** Longest PopulationBaseCode or target code accepted: bounds the engine's parse work. */
export const MAX_EXPRESSION_LENGTH = 2000;
export const MIN_TARGET_CODES = 1;
export const MAX_TARGET_CODES = 2;

const FIELDS = ['SurveyCode', 'AuthorizationGroup', 'PopulationBaseCode', 'TargetCodes'];
const JSON_HINT = 'Send a JSON object such as {"SurveyCode":"GSS","PopulationBaseCode":"*","TargetCodes":["sex=2"]}.';

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Decodes and parses the body as JSON; only syntax, not shape. */
export function parseJsonBody(body: Uint8Array | string | undefined): { json: unknown } | ServiceError {
  let text: string;
  if (typeof body === 'string') {
    text = body;
  } else {
    const bytes = body ?? new Uint8Array(0);
    if (!isUtf8(bytes)) return serviceError('invalid_json', 'The request body is not valid UTF-8.', 'Encode the JSON body as UTF-8.');
    // What node:http hands over is a Buffer already: decoded as it is, without a view made first.
    text = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('utf8');
    // As the WHATWG decoder did: a leading byte order mark is not part of the text.
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  }
  if (text.trim() === '') return serviceError('invalid_json', 'The request body is empty.', JSON_HINT);
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const shortReason = reason.length > 120 ? `${reason.slice(0, 120)}...` : reason;
    return serviceError('invalid_json', `The request body is not valid JSON: ${shortReason}`, JSON_HINT);
  }
  // Each name written twice in one object makes one member fewer in what JSON.parse made:
  // equal counts mean no duplicate, and only then is the name looked for.
  const duplicate = memberNames(text) === membersOf(json) ? undefined : duplicateKey(text);
  if (duplicate !== undefined) {
    return serviceError('invalid_json', `The request body names ${quote(duplicate, 40)} twice in one object.`, 'Send each field once: JSON parsers disagree on which duplicate wins.');
  }
  return { json };
}

/**
 * How many member names `text` writes, in all its objects. `text` must be valid JSON, where
 * a string followed by a colon is always a member name.
 */
function memberNames(text: string): number {
  let names = 0;
  for (let at = text.indexOf('"'); at !== -1; at = text.indexOf('"', at + 1)) {
    // The closing quote: the next one not escaped (a backslash skips the character after it).
    for (at++; text.charCodeAt(at) !== 0x22; at++) if (text.charCodeAt(at) === 0x5c /* \ */) at++;
    let next = at + 1;
    // JSON whitespace: space, tab, line feed, carriage return.
    for (let c = text.charCodeAt(next); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++next));
    if (text.charCodeAt(next) === 0x3a /* : */) names++;
  }
  return names;
}

/** How many members the objects of a parsed JSON value hold, all together (walked without recursion). */
function membersOf(json: unknown): number {
  let members = 0;
  const stack: unknown[] = [json];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    const keys = Object.keys(value);
    members += keys.length;
    for (const key of keys) {
      const item = (value as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push(item);
    }
  }
  return members;
}

/**
 * The first key that appears twice in one object of `text`, which must be valid JSON (it is
 * scanned, not validated: strings and nesting are all that matter here).
 */
function duplicateKey(text: string): string | undefined {
  const objects: Array<Set<string> | undefined> = [];
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === 0x7b /* { */) objects.push(new Set());
    else if (char === 0x5b /* [ */) objects.push(undefined);
    else if (char === 0x7d /* } */ || char === 0x5d /* ] */) objects.pop();
    else if (char === 0x22 /* " */) {
      const start = at;
      let escaped = false;
      for (at++; text.charCodeAt(at) !== 0x22; at++) {
        if (text.charCodeAt(at) === 0x5c /* \ */) {
          at++;
          escaped = true;
        }
      }
      let next = at + 1;
      // JSON whitespace: space, tab, line feed, carriage return.
      for (let c = text.charCodeAt(next); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++next));
      const keys = objects.at(-1);
      if (text.charCodeAt(next) === 0x3a /* : */ && keys !== undefined) {
        const key = escaped ? (JSON.parse(text.slice(start, at + 1)) as string) : text.slice(start + 1, at);
        if (keys.has(key)) return key;
        keys.add(key);
      }
    }
  }
  return undefined;
}

function checkName(body: Record<string, unknown>, field: 'SurveyCode' | 'AuthorizationGroup', required: boolean): ServiceError | undefined {
  const value = body[field];
  if (value === undefined || (value === null && !required)) {
    return required ? serviceError('invalid_request', `${field} is required.`, JSON_HINT, field) : undefined;
  }
  if (typeof value !== 'string') {
    return serviceError('invalid_request', `${field} must be a string; got ${typeName(value)}.`, JSON_HINT, field);
  }
  if (value.length === 0 || value.length > MAX_NAME_LENGTH) {
    return serviceError('invalid_request', `${field} must be 1 to ${MAX_NAME_LENGTH} characters long; got ${value.length}.`, JSON_HINT, field);
  }
  return undefined;
}

function checkExpression(value: unknown, what: string): string | undefined {
  if (typeof value !== 'string') return `${what} must be a string; got ${typeName(value)}`;
  if (value.trim().length === 0) return `${what} must not be empty`;
  if (value.length > MAX_EXPRESSION_LENGTH) return `${what} is ${value.length} characters long; the maximum is ${MAX_EXPRESSION_LENGTH}`;
  return undefined;
}

/**
 * Validates a parsed JSON body against CrosstabRequest. Reports the first problem, checking
 * fields in a fixed order so that an unchanged request always fails identically.
 */
export function validateCrosstabRequest(json: unknown): CrosstabRequest | ServiceError {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return serviceError('invalid_request', `The request body must be a JSON object; got ${typeName(json)}.`, JSON_HINT);
  }
  const body = json as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!FIELDS.includes(key)) {
      return serviceError('invalid_request', `Unknown field ${quote(key, 40)}.`, `Allowed fields: ${FIELDS.join(', ')} (names are case-sensitive).`, key.length > 40 ? undefined : key);
    }
  }
  const nameError = checkName(body, 'SurveyCode', true) ?? checkName(body, 'AuthorizationGroup', false);
  if (nameError) return nameError;

  const base = body['PopulationBaseCode'];
  if (base === undefined) return serviceError('invalid_request', 'PopulationBaseCode is required.', 'Use "*" for the whole survey population.', 'PopulationBaseCode');
  const baseProblem = checkExpression(base, 'PopulationBaseCode');
  if (baseProblem) return serviceError('invalid_request', `${baseProblem}.`, 'Use "*" for the whole survey population.', 'PopulationBaseCode');

  const targets = body['TargetCodes'];
  const targetsHint = 'Send TargetCodes as an array of 1 or 2 target code strings, e.g. ["sex=2"]; split larger requests.';
  if (!Array.isArray(targets)) {
    const got = targets === undefined ? 'it is missing' : `got ${typeName(targets)}`;
    return serviceError('invalid_target_codes', `TargetCodes must be an array containing between ${MIN_TARGET_CODES} and ${MAX_TARGET_CODES} items; ${got}.`, targetsHint, 'TargetCodes');
  }
  if (targets.length < MIN_TARGET_CODES || targets.length > MAX_TARGET_CODES) {
    return serviceError('invalid_target_codes', `TargetCodes must contain between ${MIN_TARGET_CODES} and ${MAX_TARGET_CODES} items; got ${targets.length}.`, targetsHint, 'TargetCodes');
  }
  for (let index = 0; index < targets.length; index++) {
    const problem = checkExpression(targets[index], `TargetCodes[${index}]`);
    if (problem) {
      return serviceError('invalid_target_codes', `TargetCodes must contain between ${MIN_TARGET_CODES} and ${MAX_TARGET_CODES} non-empty strings; ${problem}.`, targetsHint, 'TargetCodes');
    }
  }

  const request: CrosstabRequest = {
    SurveyCode: body['SurveyCode'] as string,
    PopulationBaseCode: base as string,
    TargetCodes: targets as string[],
  };
  const group = body['AuthorizationGroup'];
  if (typeof group === 'string') request.AuthorizationGroup = group;
  return request;
}
