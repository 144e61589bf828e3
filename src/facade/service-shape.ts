import type { CrosstabResult, StabilityLevel } from './types.js';

/** One entry of `Results` in the REST response body. */
export interface ServiceResult {
  WgtAud: number;
  Resps: number;
  /** 0 = stable, 1 = unstable (at or below the dataset's caution threshold). */
  Stbl: 0 | 1;
}

/** The 200 body of POST /crosstab. */
export interface ServiceResponse {
  ResultCode: number;
  ResultDescription: string;
  Results: ServiceResult[];
  AudienceReportUnits: number;
}

/**
 * ResultCode values above 0 on a 200: a partial or conditional result.
 * The figures are still exact; the code tells the caller why they may not be usable.
 */
export const ConditionalResult = {
  /** The population base matches no respondent: every result is 0. */
  emptyBase: 1,
  /** The population base itself has too few respondents to be stable. */
  unstableBase: 2,
} as const;

export function stabilityFlag(level: StabilityLevel): 0 | 1 {
  return level === 'stable' ? 0 : 1;
}

/** ResultCode and ResultDescription of a result with this base. */
function conditionOf(base: CrosstabResult['base']): { code: number; description: string } {
  if (base.respondents === 0) return { code: ConditionalResult.emptyBase, description: 'The population base matches no respondents; every result is 0.' };
  if (base.stability !== 'stable') return { code: ConditionalResult.unstableBase, description: `The population base has only ${base.respondents} respondents; results are unstable.` };
  return STABLE;
}

const STABLE = Object.freeze({ code: 0, description: '' });

/** Maps a library result onto the REST response body; `WgtAud` is in AudienceReportUnits. */
export function toServiceResponse(result: CrosstabResult): ServiceResponse {
  const Results = result.targets.map((cell) => ({
    WgtAud: cell.weighted / result.units,
    Resps: cell.respondents,
    Stbl: stabilityFlag(cell.stability),
  }));
  const { code, description } = conditionOf(result.base);
  return { ResultCode: code, ResultDescription: description, Results, AudienceReportUnits: result.units };
}

/** A number as JSON.stringify writes it: its shortest round-trip text, `null` when not finite. */
function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * `JSON.stringify(toServiceResponse(result))`, byte for byte, written directly without the
 * response object and a second walk over it: the answer of every POST /crosstab.
 */
export function serviceResponseJson(result: CrosstabResult): string {
  const { targets, units } = result;
  const { code, description } = conditionOf(result.base);
  let text = `{"ResultCode":${code},"ResultDescription":${description === '' ? '""' : JSON.stringify(description)},"Results":[`;
  for (let i = 0; i < targets.length; i++) {
    const cell = targets[i]!;
    text += `${i === 0 ? '' : ','}{"WgtAud":${jsonNumber(cell.weighted / units)},"Resps":${jsonNumber(cell.respondents)},"Stbl":${stabilityFlag(cell.stability)}}`;
  }
  return `${text}],"AudienceReportUnits":${jsonNumber(units)}}`;
}
