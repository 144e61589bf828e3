import { type CrosstabError, ErrorCode, type ErrorDetails, fieldError, mention, type ProblemText, problemText } from '../errors.js';

/**
 * The error of a bad admin input. `field` is the input's own name (`expires`, `from`,
 * `surveys`), in `details.field`, with the message without it in `details.problem`: each
 * front end labels the field its own way (the CLI as a flag, the portal as a form label).
 */
export function badInput(field: string, problem: string | ProblemText, hint?: string): CrosstabError {
  const details: ErrorDetails = typeof problem === 'string' ? {} : { mentions: problem.mentions };
  return fieldError(ErrorCode.invalidOption, field, typeof problem === 'string' ? problem : problem.text, hint === undefined ? details : { ...details, hint });
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
const SURVEY = /^[A-Za-z0-9_.-]{1,64}$/;
const GROUP = /^[^\s,:]{1,64}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{1,63}$/;

export function checkName(value: string | undefined, field: string, what: string): string {
  if (value === undefined || !NAME.test(value)) {
    throw badInput(field, `must be ${what}: 1 to 63 letters, digits, "_", "." or "-", starting with a letter or digit; got ${JSON.stringify(value ?? '')}.`);
  }
  return value;
}

export function checkEmail(value: string | undefined, field = 'email'): string {
  const email = value?.trim().toLowerCase();
  if (email === undefined || !EMAIL.test(email)) throw badInput(field, `must be an e-mail address such as analyst@acme.example; got ${JSON.stringify(value ?? '')}.`);
  return email;
}

/** Comma-separated or repeated values, trimmed, de-duplicated. */
export function splitList(values: readonly string[] | string | undefined): string[] {
  const list = (typeof values === 'string' ? [values] : (values ?? [])).flatMap((value) => value.split(','));
  return [...new Set(list.map((value) => value.trim()).filter((value) => value !== ''))];
}

/** Licensed surveys and, per survey, its authorization groups: `GSS:_ALL_`, `NHANES:demographics`. */
export type Licences = Map<string, string[]>;

/**
 * Parses `--surveys GSS,NHANES --groups GSS:_ALL_ --groups NHANES:demographics`. A survey
 * without groups is licensed but cannot be queried until permissions are given.
 */
export function parseLicences(surveys: readonly string[] | undefined, groups: readonly string[] | undefined): Licences {
  const licences: Licences = new Map();
  const surveyList = splitList(surveys);
  if (surveyList.length === 0) throw badInput('surveys', 'must name at least one SurveyCode, e.g. GSS,NHANES.');
  for (const survey of surveyList) {
    if (!SURVEY.test(survey) || survey === '_ALL_') throw badInput('surveys', `has an invalid SurveyCode ${JSON.stringify(survey)}: use the codes of the served datasets, e.g. GSS.`);
    licences.set(survey, []);
  }
  for (const item of splitList(groups)) {
    const colon = item.indexOf(':');
    const survey = item.slice(0, colon);
    const group = item.slice(colon + 1);
    if (colon < 1 || !GROUP.test(group)) {
      throw badInput('groups', `has ${JSON.stringify(item)}; give SURVEY:GROUP, e.g. GSS:_ALL_ (every group) or NHANES:demographics.`);
    }
    const list = licences.get(survey);
    if (list === undefined) throw badInput('groups', problemText`names survey ${survey} in ${JSON.stringify(item)}, which is not in ${mention('surveys')} (${surveyList.join(', ')}).`, `Add ${survey} to the licensed surveys or fix the survey code.`);
    if (!list.includes(group)) list.push(group);
  }
  return licences;
}

/** A positive integer limit, or null for `none`. */
export function parseLimit(value: string | undefined, field: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 2_000_000_000) throw badInput(field, `must be a positive integer or "none"; got ${JSON.stringify(value)}.`);
  return number;
}

/** An ISO 8601 date or date-time in the future (for key expiry). */
export function parseExpiry(value: string | undefined, field = 'expires'): Date | null {
  if (value === undefined) return null;
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw badInput(field, `must be an ISO 8601 date-time such as 2027-01-01T00:00:00Z; got ${JSON.stringify(value)}.`);
  if (time <= Date.now()) throw badInput(field, `is in the past (${new Date(time).toISOString()}); give a future date-time.`);
  return new Date(time);
}
