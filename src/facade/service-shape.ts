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

/** Maps a library result onto the REST response body; `WgtAud` is in AudienceReportUnits. */
export function toServiceResponse(result: CrosstabResult): ServiceResponse {
  const Results = result.targets.map((cell) => ({
    WgtAud: cell.weighted / result.units,
    Resps: cell.respondents,
    Stbl: stabilityFlag(cell.stability),
  }));
  let ResultCode = 0;
  let ResultDescription = '';
  if (result.base.respondents === 0) {
    ResultCode = ConditionalResult.emptyBase;
    ResultDescription = 'The population base matches no respondents; every result is 0.';
  } else if (result.base.stability !== 'stable') {
    ResultCode = ConditionalResult.unstableBase;
    ResultDescription = `The population base has only ${result.base.respondents} respondents; results are unstable.`;
  }
  return { ResultCode, ResultDescription, Results, AudienceReportUnits: result.units };
}
