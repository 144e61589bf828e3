/**
 * A computed table (the JSON Table of POST /tables) as a heat map: each cell shaded by its
 * column percentage, the figures written in it (text dark or white, whichever contrasts more
 * with the shade), stability marks, significance letters, and a legend.
 */
import type { TableJson, TableJsonCell } from '../index.js';
import { html, raw, type Raw } from './html.js';

/** The per-cell figures besides the column percentage, in the registry's order, as the page names them. */
const FIGURE_LABELS: ReadonlyArray<[keyof TableJsonCell, string, 'percent' | 'number']> = [
  ['rowPct', 'row %', 'percent'],
  ['tablePct', 'table %', 'percent'],
  ['index', 'index', 'number'],
  ['effectiveBase', 'eff. base', 'number'],
  ['designEffect', 'deff', 'number'],
  ['columnPctSE', 'SE', 'percent'],
  ['columnPctMoE', '± MoE', 'percent'],
];

/** The shade's end colours: white for 0 %, the brand's dark blue for 100 %. */
const LOW = [255, 255, 255] as const;
const HIGH = [26, 52, 168] as const;
const INK = [20, 33, 61] as const;

const channel = (value: number): number => {
  const c = value / 255;
  return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};
const luminance = (rgb: readonly number[]): number => 0.2126 * channel(rgb[0]!) + 0.7152 * channel(rgb[1]!) + 0.0722 * channel(rgb[2]!);
const contrast = (a: readonly number[], b: readonly number[]): number => {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
};

/** The background of a column share (0–1) and the text colour that reads best on it. */
export function shade(share: number): { background: string; text: string; contrast: number } {
  const t = Math.min(1, Math.max(0, share));
  const rgb = LOW.map((low, i) => Math.round(low + (HIGH[i]! - low) * t));
  const ink = contrast(rgb, INK);
  const white = contrast(rgb, [255, 255, 255]);
  return { background: `rgb(${rgb.join(',')})`, text: ink >= white ? '#14213d' : '#ffffff', contrast: Math.max(ink, white) };
}

const percent = (value: number | null | undefined, digits = 1): string => (value === null || value === undefined ? '–' : `${(value * 100).toFixed(digits)}%`);
const number = (value: number | null | undefined, digits = 1): string => (value === null || value === undefined ? '–' : value.toLocaleString('en-US', { maximumFractionDigits: digits }));
const mark = (stability: string): string => (stability === 'very-unstable' ? '**' : stability === 'caution' ? '*' : '');

/** The shading classes are few (0, 5, ... 100 %), so the page needs no inline styles (the CSP allows none). */
export const SHADE_STEPS = 20;
export function shadeClass(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return 'heat-none';
  return `heat-${Math.round(Math.min(1, Math.max(0, share)) * SHADE_STEPS)}`;
}

/** The stylesheet rules of the shading classes. */
export function shadeCss(): string {
  let css = '.heat-none { background:#f5f7fb; color:#14213d; }\n';
  for (let step = 0; step <= SHADE_STEPS; step++) {
    const { background, text } = shade(step / SHADE_STEPS);
    css += `.heat-${step} { background:${background}; color:${text}; }\n`;
  }
  return css;
}

function cellHtml(cell: TableJsonCell, extra: ReadonlyArray<[keyof TableJsonCell, string, 'percent' | 'number']>): Raw {
  const share = cell.columnPct;
  const figures = extra.map(([field, label, kind]) => html`<span class="fig">${label} ${kind === 'percent' ? percent(cell[field] as number | null, 2) : number(cell[field] as number | null, 2)}</span>`);
  const unstable = cell.stability === 'very-unstable' ? ' very-unstable' : '';
  return html`<td class="num heat ${shadeClass(share)}${raw(unstable)}"><span class="pct">${percent(share)}${mark(cell.stability)}</span>${cell.letters ? html`<sup class="letters">${cell.letters}</sup>` : raw('')}<span class="fig">n ${cell.respondents.toLocaleString('en-US')}</span>${figures}</td>`;
}

/** The table, its column letters and its legend and footnotes. */
export function heatMap(table: TableJson, survey: string): Raw {
  const present = FIGURE_LABELS.filter(([field]) => table.cells.some((row) => row.some((cell) => cell[field] !== undefined)));
  const head = table.columns.map((column) => html`<th scope="col" class="num">${column.label}${column.letter ? html` <span class="letter">(${column.letter})</span>` : raw('')}<br><code>${column.expr}</code></th>`);
  const bases = table.columnTotals.map((total) => html`<td class="num">${total.respondents.toLocaleString('en-US')}</td>`);
  const body = table.rows.map(
    (row, r) => html`<tr><th scope="row">${row.label}<br><code>${row.expr}</code></th>${(table.cells[r] ?? []).map((cell) => cellHtml(cell, present))}</tr>`,
  );
  const { cautionMax, veryUnstableMax } = table.stabilityThresholds;
  const stats = table.statistics;
  const lettersNote =
    stats && stats.stats.includes('sig')
      ? html`<li>Letters: the cell's column percentage is significantly greater than that of the column with that letter (${stats.test} test, ${stats.correction === 'none' ? 'no correction for multiple comparisons' : `${stats.correction} correction`}, α = ${stats.alpha}); no letter: no significant difference.</li>`
      : html`<li>No significance letters: tick "Significance letters" to compare the columns.</li>`;
  const scale = Array.from({ length: 6 }, (_, i) => html`<span class="swatch ${shadeClass(i / 5)}">${i * 20}%</span>`);
  return html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="result-title">
    <table class="heatmap" id="result-table">
      <caption>Column percentages of ${survey}: base <code>${table.base}</code>, ${table.weight === null ? 'unweighted' : html`weight <code>${table.weight}</code>`}.</caption>
      <thead><tr><th scope="col">Rows \\ Columns</th>${head}</tr></thead>
      <tbody><tr class="bases"><th scope="row">Base (respondents)</th>${bases}</tr>${body}</tbody>
    </table>
  </div>
  <div class="legend" aria-label="Legend">
    <p class="scale" aria-hidden="true"><span class="muted">Column %</span> ${scale}</p>
    <ul>
      <li>Cells are shaded by their column percentage (darker = higher) and show it, then the respondents (n)${present.length > 0 ? html` and ${present.map(([, label]) => label).join(', ')}` : raw('')}.</li>
      <li>* use with caution: ${veryUnstableMax + 1}–${cautionMax} respondents; ** very unstable: ${veryUnstableMax} or fewer (dashed outline).</li>
      ${lettersNote}
      <li>${table.missingNote.charAt(0).toUpperCase()}${table.missingNote.slice(1)}.</li>
    </ul>
  </div>${raoScottSection(table)}`;
}

/** With Chi-square asked for: each Rao–Scott test of the table, and each column group that has none and why (as the text, HTML and XLSX outputs note them). */
function raoScottSection(table: TableJson): Raw {
  if (!table.statistics?.stats.includes('chisq')) return raw('');
  const fixed = (value: number | null, digits: number): string => (value === null ? '–' : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
  const tests = (table.raoScott ?? []).map(
    (test) =>
      html`<li><code>${test.rowVariable}</code> × <code>${test.columnVariable}</code>: F = ${fixed(test.statistic, 3)} on ${fixed(test.ndf, 2)} and ${fixed(test.ddf, 2)} df, p = ${test.pValue === null ? '–' : test.pValue.toPrecision(3)}</li>`,
  );
  const notDefined = (table.raoScottNotDefined ?? []).map((entry) => {
    const group = table.columnGroups?.[entry.group];
    const columns = group ? `${group.variable ?? 'columns'} ${group.letters[0] ?? ''}–${group.letters[group.letters.length - 1] ?? ''}` : 'columns';
    return entry.reason === 'overlapping-rows'
      ? html`<li class="muted">${entry.rowVariable ?? 'rows'} × ${group?.variable ?? 'columns'}: not defined, the rows of a multi-response variable share respondents (the test is of mutually exclusive categories).</li>`
      : html`<li class="muted">${columns}: not defined, the columns share respondents (the test is of mutually exclusive categories).</li>`;
  });
  const none = tests.length + notDefined.length === 0 ? html`<li class="muted">No test: it needs whole variables on the rows and the columns, not expressions.</li>` : raw('');
  return html`
  <section class="legend" id="rao-scott" aria-labelledby="rao-scott-title">
    <h3 id="rao-scott-title">Chi-square (Rao–Scott)</h3>
    <p class="muted">Rao–Scott second-order corrected test of independence of the rows and each variable's columns, as R's <code>svychisq()</code>, under the survey's design.</p>
    <ul>${tests}${notDefined}${none}</ul>
  </section>`;
}
