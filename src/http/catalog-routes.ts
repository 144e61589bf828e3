/**
 * The survey catalog and tables endpoints, as one block for the handler: which methods each
 * path takes, and the operation that answers. GET /surveys, GET /surveys/{SurveyCode},
 * POST /tables (OPTIONS /tables is the handler's CORS preflight).
 */
import type { CallerContext } from './caller.js';
import type { AccessLogEntry, CrosstabDataset, HandlerRequest } from './handler-types.js';
import type { OperationReply } from './operation-reply.js';
import { serviceError, type ServiceError } from './service-error.js';
import { createSurveysOperation } from './surveys-operation.js';
import { createTablesOperation } from './tables-operation.js';
import type { UsageSink } from './usage-ledger.js';

export interface CatalogRoutes {
  /** The methods `operation` (the path under the base path) takes, or undefined when it is not one of these. */
  methodsOf(operation: string): readonly string[] | undefined;
  /** Answers a request whose path and method methodsOf() accepted (OPTIONS excepted). */
  handle(operation: string, request: HandlerRequest, requestId: string, entry: AccessLogEntry): Promise<OperationReply | ServiceError>;
}

const READ = ['GET', 'HEAD'] as const;
const WRITE = ['POST', 'OPTIONS'] as const;

/** The SurveyCode segment of `/surveys/{SurveyCode}`, still percent-encoded. */
function surveySegment(operation: string): string | undefined {
  const match = /^\/surveys\/([^/]+)$/.exec(operation);
  return match === null ? undefined : match[1];
}

export function createCatalogRoutes(
  context: CallerContext & { surveys: ReadonlyMap<string, CrosstabDataset>; usage: UsageSink; maxBodyBytes: number; basePath: string },
): CatalogRoutes {
  const surveys = createSurveysOperation(context);
  const tables = createTablesOperation(context);
  return {
    methodsOf(operation) {
      if (operation === '/tables') return WRITE;
      return operation === '/surveys' || surveySegment(operation) !== undefined ? READ : undefined;
    },
    handle(operation, request, requestId, entry) {
      if (operation === '/tables') return tables(request, requestId, entry);
      if (operation === '/surveys') return surveys(request, undefined, entry);
      const segment = surveySegment(operation);
      if (segment !== undefined) return surveys(request, segment, entry);
      return Promise.resolve(serviceError('not_found', `No operation at ${operation}.`, 'GET /surveys lists your surveys.'));
    },
  };
}
