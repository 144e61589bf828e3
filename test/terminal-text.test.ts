// Plain-text output shows control characters of labels as pictures (a terminal would act on
// ESC sequences, carriage returns and bells, and their width 0 slips the columns); JSON keeps
// the label as it is.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, tableStatistics, tableToJSON, tableToText, type Dataset } from '../src/index.js';
import { formatTable } from '../src/cli/format-table.js';
import { displayWidth } from '../src/report/display-width.js';
import { terminalText } from '../src/text/terminal-text.js';

// Any C0 control but the line break, DEL, or a C1 control.
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const RED = '\u001b[31mred\u001b[0m';

describe('control characters in text output', () => {
  let gss: Dataset;
  beforeAll(async () => {
    gss = await openDataset(inject('testDatasets').gss);
  });
  afterAll(async () => {
    await gss?.close();
  });

  it('shows C0 controls as their pictures, DEL as ␡, C1 controls as U+FFFD, and leaves other text alone', () => {
    expect(terminalText(RED)).toBe('␛[31mred␛[0m');
    expect(terminalText('a\rb\nc\td\u0007\u0000')).toBe('a␍b␊c␉d␇␀');
    expect(terminalText('x\u007fy\u009bz\u0085')).toBe('x␡y\ufffdz\ufffd');
    const plain = 'Ça va? 東京 — 1=Male, "quoted" \\x1b';
    expect(terminalText(plain)).toBe(plain);
  });

  it('tableToText: row, column and banner labels, the title and the base', async () => {
    const result = await gss.table({ base: 'year=2024', rows: [{ expr: 'sex=1', label: RED }, { expr: 'sex=2', label: 'two\rlines\nhere' }], columns: [{ expr: 'race=1', label: 'bell\u0007' }, { variable: 'degree' }], missing: 'hide' });
    const stats = tableStatistics(result, { stats: ['vpct'] });
    const text = tableToText(result, stats, { title: `title \u001b]0;owned\u0007`, variableLabels: { degree: 'degree\u001b[2J' } });
    for (const line of text.split('\n')) expect(line, JSON.stringify(line)).not.toMatch(CONTROL);
    expect(text).toContain('␛[31mred␛[0m');
    expect(text).toContain('two␍lines␊here');
    expect(text).toContain('bell␇');
    expect(text).toContain('degree␛[2J');
    expect(text).toContain('title ␛]0;owned␇');
    // The rule under the header is as wide as the header line: pictures take one column each.
    const lines = text.split('\n');
    const rule = lines.findIndex((line) => line.startsWith('─'));
    expect(displayWidth(lines[rule - 1]!.trimEnd())).toBeLessThanOrEqual(displayWidth(lines[rule]!));
    // The JSON document keeps the labels as they are.
    const json = JSON.stringify(tableToJSON(result, stats));
    expect(json).toContain(JSON.stringify(RED).slice(1, -1));
  });

  it('formatTable (crosstab info, crosstab query): every cell and heading', () => {
    const text = formatTable(['code', 'label\u001b'], [['a=1', RED], ['b=2', 'ok']]);
    for (const line of text.split('\n')) expect(line).not.toMatch(CONTROL);
    expect(text).toContain('label␛');
    const [header, rule] = text.split('\n');
    expect(displayWidth(header!)).toBe(displayWidth(rule!));
  });
});
