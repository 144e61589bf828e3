/**
 * A request's view of the served surveys that holds each dataset it gets (CrosstabDataset.hold)
 * until the operation has settled: when a reload replaces the dataset meanwhile and closes the
 * old version with a drain, the request goes on with the version it started on (a tab book's
 * later tables, a table waiting for its account's turn or for its audiences), instead of its
 * next call being refused as if the service were shutting down.
 */
import type { CrosstabDataset } from './handler-types.js';
import type { AuthenticatedContext, RouteResult } from './route.js';

class HeldSurveys implements ReadonlyMap<string, CrosstabDataset> {
  readonly releases: Array<() => void> = [];
  /** The version of each survey this operation got first: asked again, it gets the same one, even after a reload. */
  private readonly held = new Map<string, CrosstabDataset>();
  constructor(private readonly served: ReadonlyMap<string, CrosstabDataset>) {}
  get(survey: string): CrosstabDataset | undefined {
    const kept = this.held.get(survey);
    if (kept !== undefined) return kept;
    const dataset = this.served.get(survey);
    if (dataset === undefined) return undefined;
    this.held.set(survey, dataset);
    if (dataset.hold !== undefined) this.releases.push(dataset.hold());
    return dataset;
  }
  has(survey: string): boolean {
    return this.served.has(survey);
  }
  get size(): number {
    return this.served.size;
  }
  keys() {
    return this.served.keys();
  }
  values() {
    return this.served.values();
  }
  entries() {
    return this.served.entries();
  }
  forEach(each: (dataset: CrosstabDataset, survey: string, map: ReadonlyMap<string, CrosstabDataset>) => void): void {
    this.served.forEach((dataset, survey) => each(dataset, survey, this));
  }
  [Symbol.iterator]() {
    return this.served[Symbol.iterator]();
  }
}

/** `operation` with the datasets it gets held until it settles. */
export function holdingDatasets(operation: (context: AuthenticatedContext) => Promise<RouteResult>): (context: AuthenticatedContext) => Promise<RouteResult> {
  return async (context) => {
    const surveys = new HeldSurveys(context.service.surveys);
    try {
      return await operation({ ...context, service: { ...context.service, surveys } });
    } finally {
      for (const release of surveys.releases) release();
    }
  };
}
