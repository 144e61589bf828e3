/**
 * What a caller may know about the surveys it licenses: the list (GET /surveys) and one
 * survey's variables, values, ranges, codes and weights (GET /surveys/{SurveyCode}), limited
 * to the caller's authorization groups. Every value, range and code is given with the
 * expression that selects exactly its respondents, printed by the engine's own printers.
 */
import { numberText, rangeExpression, valueExpression, nameText } from '../text/expression-text.js';
import type { DatasetInfo, VariableInfo } from '../index.js';
import { authorize } from './auth.js';
import type { ApiKeyRecord } from './key-file.js';
import { isServiceError } from './service-error.js';

/** Shown respondent counts are rounded to a multiple of this. */
export const RESPONDENT_ROUNDING = 10;

/**
 * A numeric variable without value labels lists its values only up to this many; beyond, its
 * Range describes it (an id or a weight-like column would list thousands of values, nearly
 * all suppressed).
 */
export const MAX_LISTED_NUMERIC_VALUES = 200;

/** The part of a served dataset the catalog reads. */
export interface CatalogDataset {
  readonly info: DatasetInfo;
  /** Authorization groups an expression touches (Dataset.groupsOf): codes are defined only when all are the caller's. */
  groupsOf?(expression: string, allowedGroups?: readonly string[]): string[];
}

export interface SurveySummary {
  SurveyCode: string;
  Name: string;
  Respondents: number;
  AudienceReportUnits: number;
  /** Weight columns; the first is the default. */
  Weights: string[];
  /** `simple`, `taylor` (strata and PSUs) or `replicate` (replicate weights). */
  Design: 'simple' | 'taylor' | 'replicate';
  /**
   * Which build of the survey's data is served: its checksum (also the X-Dataset-Version
   * header of every answer computed from it) and when it was built.
   */
  Version: { Checksum: string; BuiltAt: string };
}

/** A respondent count as shown: rounded, or null (suppressed) below the low-base threshold. */
export type ShownCount = number | null;

export interface CatalogValue {
  Value: string;
  Label?: string;
  /** `VAR=value`, quoted where the grammar needs it. */
  Expression: string;
  Respondents: ShownCount;
}

export interface CatalogVariable {
  Name: string;
  Label?: string;
  /** `multi`: a multi-response variable; a respondent holds any number of its Values (`VAR=v1,v2` is any of them). */
  Kind: 'numeric' | 'text' | 'multi';
  AuthorizationGroup: string;
  /** Number of distinct answers (not blank). */
  Distinct: number;
  /**
   * Values with labels and counts; absent for a variable of more than 5,000 distinct values,
   * and for a numeric one without value labels of more than MAX_LISTED_NUMERIC_VALUES.
   */
  Values?: CatalogValue[];
  /** Numeric variables: the smallest and largest answers, and the range expression covering every answer. */
  Range?: { Min: number; Max: number; Expression: string };
  /** Respondents with no answer (`VAR=NA`; multi: no answer at all), when there are any. */
  Missing?: { Expression: string; Respondents: ShownCount };
}

export interface CatalogCode {
  Name: string;
  Label?: string;
  AuthorizationGroup: string;
  /** The code as an expression (its name). */
  Expression: string;
  /** Its definition, when every variable and code it is built from is in the caller's groups. */
  Definition?: string;
}

export interface SurveyDetail extends SurveySummary {
  /** The caller's authorization groups in this survey (no other group is named anywhere). */
  AuthorizationGroups: string[];
  /** Counts of this many respondents or fewer are not shown (null). */
  SuppressedAtOrBelow: number;
  /** Shown counts are rounded to a multiple of this. */
  CountRounding: number;
  Variables: CatalogVariable[];
  Codes: CatalogCode[];
}

/** The groups of `info` the key may use, or undefined when it may use none of them. */
export function callerGroups(key: ApiKeyRecord, info: DatasetInfo): string[] | undefined {
  const access = authorize(key, info, undefined);
  if (isServiceError(access)) return undefined;
  return access.allowedGroups ?? [...info.groups];
}

export function surveySummary(info: DatasetInfo): SurveySummary {
  return {
    SurveyCode: info.survey,
    Name: info.name,
    Respondents: info.respondents,
    AudienceReportUnits: info.units,
    Weights: [...info.weights],
    Design: info.design.kind,
    Version: { Checksum: info.checksum, BuiltAt: info.createdAt },
  };
}

/** `respondents` as shown: null at or below the threshold, else rounded to RESPONDENT_ROUNDING. */
export function shownCount(respondents: number, suppressedAtOrBelow: number): ShownCount {
  if (respondents <= suppressedAtOrBelow) return null;
  return Math.round(respondents / RESPONDENT_ROUNDING) * RESPONDENT_ROUNDING;
}

function catalogVariable(variable: VariableInfo, suppressedAtOrBelow: number): CatalogVariable {
  const entry: CatalogVariable = { Name: variable.name, Kind: variable.kind, AuthorizationGroup: variable.group, Distinct: variable.distinct };
  if (variable.label !== undefined) entry.Label = variable.label;
  const listed = variable.kind !== 'numeric' || variable.distinct <= MAX_LISTED_NUMERIC_VALUES || variable.values?.some((value) => value.label !== undefined);
  if (variable.values !== undefined && listed) {
    entry.Values = variable.values.map((value) => {
      const shown: CatalogValue = { Value: value.value, Expression: valueExpression(variable.name, value.value), Respondents: shownCount(value.respondents, suppressedAtOrBelow) };
      if (value.label !== undefined) shown.Label = value.label;
      return shown;
    });
  }
  // JSON has no infinities (a file's overflowing numbers): such a variable is described by its values.
  if (variable.kind === 'numeric' && Number.isFinite(variable.min) && Number.isFinite(variable.max)) {
    const min = variable.min as number;
    const max = variable.max as number;
    entry.Range = { Min: min, Max: max, Expression: rangeExpression(variable.name, numberText(min), numberText(max)) };
  }
  if (variable.missing > 0) entry.Missing = { Expression: `${nameText(variable.name)}=NA`, Respondents: shownCount(variable.missing, suppressedAtOrBelow) };
  return entry;
}

/** The survey as the caller may see it: only variables and codes of `groups`. */
export function surveyDetail(dataset: CatalogDataset, groups: readonly string[]): SurveyDetail {
  const { info } = dataset;
  const mine = new Set(groups);
  const suppressedAtOrBelow = info.stability.veryUnstableMax;
  const codes = info.codes
    .filter((code) => mine.has(code.group))
    .map((code): CatalogCode => {
      const shown: CatalogCode = { Name: code.name, AuthorizationGroup: code.group, Expression: nameText(code.name) };
      if (code.label !== undefined) shown.Label = code.label;
      if (definitionIsMine(dataset, code.expr, mine)) shown.Definition = code.expr;
      return shown;
    });
  return {
    ...surveySummary(info),
    AuthorizationGroups: info.groups.filter((group) => mine.has(group)),
    SuppressedAtOrBelow: suppressedAtOrBelow,
    CountRounding: RESPONDENT_ROUNDING,
    Variables: info.variables.filter((variable) => mine.has(variable.group)).map((variable) => catalogVariable(variable, suppressedAtOrBelow)),
    Codes: codes,
  };
}

/**
 * Whether a code's definition names only what the caller may see. A code stands for its own
 * group, so its definition may use variables of groups the caller does not have: then the
 * definition is left out (the code itself is still usable by its name).
 */
function definitionIsMine(dataset: CatalogDataset, expression: string, mine: ReadonlySet<string>): boolean {
  if (dataset.groupsOf === undefined) return false;
  try {
    return dataset.groupsOf(expression).every((group) => mine.has(group));
  } catch {
    return false;
  }
}
