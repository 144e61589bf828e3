import { CrosstabError } from '../errors.js';
import { displayWidth, padEndDisplay, padStartDisplay } from '../report/display-width.js';

/** Prints a failure the way every command does: what, where, how to fix. Returns the exit code. */
export function reportError(error: unknown): number {
  if (error instanceof CrosstabError) {
    process.stderr.write(`crosstab: error [${error.code}]: ${error.message}\n`);
    if (error.details.hint) process.stderr.write(`  hint: ${error.details.hint}\n`);
    return 1;
  }
  process.stderr.write(`crosstab: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`);
  return 70;
}

/** Right-aligned plain-text table, aligned by display width (CJK labels take two columns a character). */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(displayWidth(cell), ...rows.map((row) => displayWidth(row[i]!))));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? padEndDisplay(cell, widths[i]!) : padStartDisplay(cell, widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatNumber(value: number, digits = 1): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
