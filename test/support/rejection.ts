import { expect } from 'vitest';
import { CrosstabError } from '../../src/index.js';

/** The CrosstabError `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<CrosstabError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected a rejection').toBeInstanceOf(CrosstabError);
  return error as CrosstabError;
}
