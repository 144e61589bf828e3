import { CrosstabError, labelledHint, labelledMessage } from '../errors.js';
import { flagOf } from './flag-labels.js';

/** Prints a failure the way every command does: what, where, how to fix. Returns the exit code. */
export function reportError(error: unknown): number {
  if (error instanceof CrosstabError) {
    process.stderr.write(`crosstab: error [${error.code}]: ${labelledMessage(error, flagOf)}\n`);
    const listed = error.details.listed ? ` \`crosstab info DATASET\` lists the ${error.details.listed}.` : '';
    const hint = labelledHint(error, flagOf);
    if (hint) process.stderr.write(`  hint: ${hint}${listed}\n`);
    return 1;
  }
  process.stderr.write(`crosstab: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`);
  return 70;
}
