// Text output aligned by display width: CJK labels take two terminal columns a character
// (measured with string-width), so columns still line up under them.
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, tableToText, type Dataset } from '../../src/index.js';
import { formatTable } from '../../src/cli/format-table.js';

const paths = inject('testDatasets');
let gss: Dataset;
beforeAll(async () => {
  gss = await openDataset(paths.gss);
});
afterAll(() => gss?.close());

/** Display column of every "│" in a line. */
function rules(line: string): number[] {
  const at: number[] = [];
  let column = 0;
  for (const character of line) {
    if (character === '│' || character === '┼') at.push(column);
    column += stringWidth(character);
  }
  return at;
}

describe('wide labels', () => {
  it('tableToText keeps the column rules in place under CJK row and column labels', async () => {
    const result = await gss.table({
      base: 'year=2024',
      rows: [{ expr: 'sex=2', label: '女性' }, { expr: 'sex=1', label: 'Male' }, { expr: 'race=2', label: '黒人の回答者' }],
      columns: [{ expr: 'degree=0..1', label: '高校以下' }, { expr: 'degree=3..4', label: 'BA+' }],
    });
    const lines = tableToText(result).split('\n').filter((line) => line.includes('│') || line.includes('┼'));
    expect(lines.length).toBeGreaterThan(3);
    const expected = rules(lines[0]!);
    for (const line of lines) expect(rules(line), line).toEqual(expected);
  });

  it('the CLI table pads by display width', () => {
    const lines = formatTable(['target', 'label', 'weighted'], [['sex=2', '女性', '1.0'], ['sex=1', 'Male', '22.5'], ['relig=6', '仏教 Buddhism', '3.0']]).split('\n');
    const widths = lines.map((line) => stringWidth(line));
    expect(new Set(widths).size).toBe(1);
  });
});
