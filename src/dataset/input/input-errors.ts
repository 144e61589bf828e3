import { CrosstabError, ErrorCode } from '../../errors.js';

/** Where a problem is: a physical line (CSV), a row (typed files, 1-based), or the file as a whole. */
export type Place = { line: number } | { row: number } | undefined;

/** An `invalid_input` error about `file`: "file: what. hint". */
export function inputError(file: string, what: string, hint: string, details: Record<string, unknown> = {}): CrosstabError {
  return placedError(file, undefined, what, hint, details);
}

/** An `invalid_input` error at `place`: "file:line: what. hint", "file: row N: what. hint" or "file: what. hint". */
export function placedError(file: string, place: Place, what: string, hint: string, details: Record<string, unknown> = {}, code: ErrorCode = ErrorCode.invalidInput): CrosstabError {
  const where = place === undefined ? `${file}:` : 'line' in place ? `${file}:${place.line}:` : `${file}: row ${place.row}:`;
  return new CrosstabError(code, `${where} ${what}. ${hint}`, { file, ...place, ...details, hint });
}
