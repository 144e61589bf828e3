// Apart from output.ts: string-width (display widths) loads only for commands that print a table.
import { displayWidth, padEndDisplay, padStartDisplay } from '../report/display-width.js';

/** Right-aligned plain-text table, aligned by display width (CJK labels take two columns a character). */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(displayWidth(cell), ...rows.map((row) => displayWidth(row[i]!))));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? padEndDisplay(cell, widths[i]!) : padStartDisplay(cell, widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
