import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CrosstabError, ErrorCode } from '../../errors.js';

/**
 * A build worker's file (`csv-worker.js`, `compile-worker.js`): beside the module that
 * spawns it (`beside`, its import.meta.url) when it runs from src/ (tests), in dist/dataset/
 * when it runs from the bundle.
 */
export function workerFile(name: string, what: string, beside: string): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(dirname(fileURLToPath(beside)), name), join(here, name), join(here, 'dataset', name)]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new CrosstabError(ErrorCode.internal, `${what} (${name}) was not found next to ${here}`, { hint: 'Reinstall crosstab-engine.' });
}
