import { describe, expect, it } from 'vitest';
import { CrosstabError, ErrorCode } from '../../src/index.js';
import { engineErrorMappings, fromEngineError, serviceErrorStatus } from '../../src/http/service-error.js';

describe('engine error mapping', () => {
  it('has its own answer for every library error code: 4xx for the request, 5xx for the server', () => {
    expect(Object.keys(engineErrorMappings).sort()).toEqual(Object.values(ErrorCode).sort());
    for (const code of Object.values(ErrorCode)) {
      const answer = fromEngineError(new CrosstabError(code, `a ${code} error`, { field: 'targets[0]' }));
      expect(Object.keys(serviceErrorStatus), code).toContain(answer.code);
      expect(answer.hint.length, code).toBeGreaterThan(0);
    }
    // Errors in the request are a 4xx naming the request field; faults of the server a 5xx.
    const statusOf = (code: ErrorCode): number => serviceErrorStatus[fromEngineError(new CrosstabError(code, 'x', { field: 'base' })).code];
    for (const code of ['invalid_option', 'invalid_expression', 'unknown_variable', 'unknown_value', 'unknown_code', 'forbidden_group'] as const) {
      expect(statusOf(code), code).toBeLessThan(500);
      expect(fromEngineError(new CrosstabError(code, 'x', { field: 'base' })).field, code).toBe('PopulationBaseCode');
    }
    for (const code of ['cancelled', 'dataset_closed', 'out_of_memory', 'backend_unavailable', 'store_unavailable'] as const) expect(statusOf(code), code).toBe(503);
    for (const code of ['corrupt_dataset', 'worker_failed', 'internal'] as const) expect(statusOf(code), code).toBe(500);
    // A code of a newer library than the adapter was compiled with is a 500, not a throw.
    expect(fromEngineError(new CrosstabError('from_the_future' as ErrorCode, 'x')).code).toBe('internal');
  });
});
