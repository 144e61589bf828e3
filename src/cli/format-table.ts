// Apart from output.ts: string-width (display widths) loads only for commands that print a table.
import { displayWidth, padEndDisplay, padStartDisplay } from '../report/display-width.js';
import { terminalText } from '../text/terminal-text.js';

/** Right-aligned plain-text table, aligned by display width (CJK labels take two columns a character); control characters shown as pictures. */
export function formatTable(shownHeader: string[], shownRows: string[][]): string {
  const header = shownHeader.map(terminalText);
  const rows = shownRows.map((row) => row.map(terminalText));
  const widths = header.map((cell, i) => Math.max(displayWidth(cell), ...rows.map((row) => displayWidth(row[i]!))));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? padEndDisplay(cell, widths[i]!) : padStartDisplay(cell, widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
