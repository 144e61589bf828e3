/**
 * A computed table (the JSON Table of POST /tables) as the tab book lays it out: a Total
 * column, each banner variable's label over its columns, the base lines (weighted,
 * respondents), then per row category one line per figure with the significance letters
 * beside the vertical %, the footnotes and the Rao–Scott tests; its vertical % line shaded by
 * index or by column % (a choice, no script: the radio buttons restyle the table), never a
 * strong colour on a cell of 30 respondents or fewer. Then the table's chart (the SVG that
 * `crosstab table --chart svg` writes).
 */
import { bannerLayout, chartToSVG, indexColour, isCrosstabError, tableChart, tableFromJson, type BannerFigure, type BannerLine, type DisplayOptions, type TableJson } from '../index.js';
import { html, raw, type Raw } from './html.js';
import { shade } from './heat-map.js';

/** A cell of this many respondents or fewer is never shaded, whatever the dataset's thresholds. */
export const UNSHADED_MAX = 30;
/** Shading steps on each side of 100 for the index (log2 scale, saturating at 50 and 200), and for the column % (0–100 %). */
const INDEX_STEPS = 10;
const PERCENT_STEPS = 20;

/** The index step of a value: 0 (≤ 50) … 10 (100) … 20 (≥ 200); undefined for an undefined index. */
export function indexStep(value: number): number | undefined {
  if (!Number.isFinite(value) && value !== Number.POSITIVE_INFINITY) return undefined;
  const t = value <= 0 ? -1 : Math.max(-1, Math.min(1, Math.log2(value / 100)));
  return Math.round(t * INDEX_STEPS) + INDEX_STEPS;
}

/** The index at the middle of step `step`, whose colour the step's class gets. */
const stepIndex = (step: number): number => 100 * 2 ** ((step - INDEX_STEPS) / INDEX_STEPS);

/** The shading rules: each applies only under its radio button's choice. */
export function bannerShadeCss(): string {
  let css = '';
  for (let step = 0; step <= 2 * INDEX_STEPS; step++) css += `.banner:has(#shade-index:checked) .sx-${step} { background:${indexColour(stepIndex(step))}; color:#14213d; }\n`;
  for (let step = 0; step <= PERCENT_STEPS; step++) {
    const { background, text } = shade(step / PERCENT_STEPS);
    css += `.banner:has(#shade-pct:checked) .sp-${step} { background:${background}; color:${text}; }\n`;
  }
  css += '.banner:has(#shade-index:checked) .legend-pct, .banner:has(#shade-pct:checked) .legend-index, .banner:has(#shade-none:checked) .legend-index, .banner:has(#shade-none:checked) .legend-pct { display:none; }\n';
  return css;
}

export const BANNER_CSS = `
.banner-tools { display:flex; gap:1rem; align-items:center; flex-wrap:wrap; margin:.2rem 0 .6rem; }
.banner-tools fieldset { margin:0; padding:.1rem .8rem .3rem; } .banner-tools legend { font-size:.85rem; }
table.banner-table { width:auto; border-collapse:separate; border-spacing:0; font-variant-numeric:tabular-nums; font-size:.88rem; }
table.banner-table caption { text-align:left; color:var(--muted); font-size:.85rem; padding-bottom:.4rem; }
table.banner-table th, table.banner-table td { padding:.28rem .55rem; border-bottom:1px solid var(--line); text-transform:none; letter-spacing:0; font-size:.85rem; }
table.banner-table thead th { color:var(--ink); text-align:center; vertical-align:bottom; background:#fff; }
table.banner-table thead th.banner-label { border-bottom:2px solid var(--brand-dark); font-weight:700; }
table.banner-table thead th.banner-label.none { border-bottom-color:transparent; }
table.banner-table thead th.column { font-weight:600; min-width:5.2rem; }
table.banner-table th.stub { position:sticky; left:0; z-index:1; background:#fff; text-align:left; color:var(--ink); min-width:9.5rem; max-width:14rem; border-right:1px solid var(--line); }
table.banner-table td { text-align:right; white-space:nowrap; }
table.banner-table .total { background:#f3f5f9; font-weight:600; border-left:1px solid var(--line); border-right:1px solid var(--line); }
table.banner-table thead th.total { background:#f3f5f9; }
table.banner-table tbody.bases th, table.banner-table tbody.bases td { background:#eef1f6; font-style:italic; }
table.banner-table tbody.bases th.stub { background:#eef1f6; }
table.banner-table tr.variable th.stub { font-weight:700; font-size:.9rem; background:#fff; padding-top:.8rem; border-bottom:2px solid var(--ink); }
table.banner-table tr.variable td { border-bottom:2px solid var(--ink); }
table.banner-table tr.category th.stub { font-weight:700; padding-top:.55rem; }
table.banner-table tr.category td { padding:0; }
table.banner-table tr.line th.stub { font-weight:400; color:var(--muted); padding-left:1.3rem; font-size:.8rem; }
table.banner-table tr.line-vpct td { font-weight:700; }
table.banner-table td .letters { display:inline-block; min-width:1.6em; text-align:left; margin-left:.25rem; font-size:.75rem; font-weight:700; color:var(--brand-dark); }
table.banner-table td.shaded .letters { color:inherit; }
table.banner-table td.low { background:#f7f7f7; color:#5c677d; }
table.banner-table td.low.very-unstable { outline:1px dashed #5c677d; outline-offset:-3px; }
.sr-only { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
.legend .ramp { display:flex; gap:3px; align-items:center; flex-wrap:wrap; margin:.3rem 0; }
.legend .ramp span.swatch { color:#14213d; }
.chart-scroll { overflow-x:auto; } .chart-scroll svg { display:block; width:100%; max-width:760px; min-width:560px; height:auto; }
@media (max-width: 640px) { table.banner-table th.stub { min-width:7.5rem; max-width:8.5rem; } table.banner-table thead th.column { min-width:4.4rem; } table.banner-table th, table.banner-table td { padding:.25rem .4rem; } }
`;

const LEGEND_INDEXES = [50, 67, 80, 100, 125, 150, 200] as const;

/** The shading classes of a vertical % cell: none when its cell has 30 respondents or fewer (a pale grey instead). */
function shadeClasses(figure: BannerFigure): string {
  if (figure.respondents <= UNSHADED_MAX) return ` low${figure.stability === 'very-unstable' ? ' very-unstable' : ''}`;
  const classes: string[] = [' shaded'];
  const step = figure.index === undefined ? undefined : indexStep(figure.index);
  if (step !== undefined) classes.push(`sx-${step}`);
  if (Number.isFinite(figure.value)) classes.push(`sp-${Math.round(Math.min(1, Math.max(0, figure.value)) * PERCENT_STEPS)}`);
  return classes.join(' ');
}

function figureCell(figure: BannerFigure | undefined, line: BannerLine, column: number | 'total'): Raw {
  if (figure === undefined) return html`<td class="total"></td>`;
  if (column === 'total') return html`<td class="total" data-value="${String(figure.value)}">${figure.text}</td>`;
  const shaded = line.kind === 'vpct' ? shadeClasses(figure) : '';
  const letters = line.kind === 'vpct' && figure.letters !== undefined ? html`<span class="letters" aria-label="higher than ${figure.letters}">${figure.letters}</span>` : line.kind === 'vpct' ? raw('<span class="letters"></span>') : raw('');
  return html`<td class="num${raw(shaded)}" data-column="${column}" data-value="${String(figure.value)}"${raw(figure.index === undefined ? '' : ` data-index="${String(figure.index)}"`)}>${figure.text}${letters}</td>`;
}

/** The banner table of `table`, its shading choice, legend, footnotes, Rao–Scott tests, and its chart. */
export function bannerTable(table: TableJson, survey: string, display: DisplayOptions): Raw {
  const { result, statistics } = tableFromJson(table);
  const layout = bannerLayout(result, statistics, display);
  const width = layout.columns.length;
  const letters = layout.columns.some((column) => column.letter !== null);
  const heads = layout.banners.map((banner) => html`<th scope="colgroup" colspan="${banner.columns.length}" class="banner-label${raw(banner.label === '' ? ' none' : '')}">${banner.label}</th>`);
  const columns = layout.columns.map((column) => html`<th scope="col" class="column" title="${column.expr}">${column.label}${column.letter ? html` <span class="letter">(${column.letter})</span>` : raw('')}</th>`);
  const lineRow = (line: BannerLine, label: string, kind: string): Raw =>
    html`<tr class="line line-${kind}" data-line="${line.kind}"><th scope="row" class="stub">${label}</th>${figureCell(line.total, line, 'total')}${line.cells.map((cell, c) => figureCell(cell, line, c))}</tr>`;
  const bases = layout.bases.map((line) => lineRow(line, `Base: ${line.name.toLowerCase()}`, `base-${line.kind}`));
  const bodies = layout.rows.map(
    (row) => html`${row.heading === undefined ? raw('') : html`<tbody class="variable"><tr class="variable"><th scope="rowgroup" class="stub">${row.heading}</th><td colspan="${width + 1}"></td></tr></tbody>`}
      <tbody class="category" data-row="${row.row}"><tr class="category"><th scope="rowgroup" class="stub" title="${row.expr}">${row.label}</th><td colspan="${width + 1}"></td></tr>${row.lines.map((line) => lineRow(line, line.name, line.kind))}</tbody>`,
  );
  const hasIndex = statistics?.index !== undefined;
  const indexRamp = LEGEND_INDEXES.map((value, i) => html`<span class="swatch sx-${indexStep(value)!} legend-swatch-index">${i === 0 ? `≤${value}` : i === LEGEND_INDEXES.length - 1 ? `≥${value}` : String(value)}</span>`);
  const percentRamp = Array.from({ length: 6 }, (_, i) => html`<span class="swatch heat-${i * 4}">${i * 20}%</span>`);
  const radio = (id: string, label: string, checked: boolean, note = '') => html`<label class="check"><input type="radio" name="shading" id="${id}"${raw(checked ? ' checked' : '')}> ${label}${note}</label>`;
  const figures = [...new Set(layout.rows[0]?.lines.map((line) => line.name) ?? [])];
  const raoScott = statistics?.stats.includes('chisq')
    ? html`<section class="legend" id="rao-scott" aria-labelledby="rao-scott-title">
        <h3 id="rao-scott-title">Chi-square (Rao–Scott)</h3>
        <p class="muted">Rao–Scott second-order corrected test of independence of the rows and each variable's columns, as R's <code>svychisq()</code>, under the survey's design.</p>
        <ul>${layout.raoScott.length === 0 ? html`<li class="muted">No test: it needs whole variables on the rows and the columns, not expressions.</li>` : layout.raoScott.map((line) => html`<li>${line}.</li>`)}</ul>
      </section>`
    : raw('');
  return html`<div class="banner">
    <div class="banner-tools">
      <fieldset><legend>Shading of the vertical %</legend>
        ${radio('shade-index', 'Index', hasIndex, hasIndex ? '' : ' (tick Index to compute it)')}${radio('shade-pct', 'Column %', !hasIndex)}${radio('shade-none', 'None', false)}
      </fieldset>
    </div>
    <div class="table-wrap banner-wrap" tabindex="0" role="region" aria-labelledby="result-title">
    <table class="banner-table" id="result-table">
      <caption>${display.title ?? survey}: base <code>${table.base}</code>, ${table.weight === null ? 'unweighted' : html`weight <code>${table.weight}</code>`}. One line per figure: ${figures.join(', ')}${letters ? '; letters beside the vertical %' : ''}.</caption>
      <thead>
        <tr class="banners"><th scope="col" class="stub" rowspan="2"><span class="sr-only">Rows</span></th><th scope="col" class="total" rowspan="2">Total</th>${heads}</tr>
        <tr class="columns">${columns}</tr>
      </thead>
      <tbody class="bases">${bases}</tbody>
      ${bodies}
    </table>
    </div>
    <div class="legend" aria-label="Legend">
      <p class="ramp legend-index" aria-hidden="true"><span class="muted">Index</span> ${indexRamp}</p>
      <p class="ramp legend-pct" aria-hidden="true"><span class="muted">Column %</span> ${percentRamp}</p>
      <ul>
        <li class="legend-index">Vertical % shaded by its index (100 × the cell's vertical % ÷ the Total column's): white at 100 (average), blue below, red above.</li>
        <li class="legend-pct">Vertical % shaded by its value: darker = higher.</li>
        <li>Cells of ${UNSHADED_MAX} respondents or fewer are never shaded (grey${result.stability.veryUnstableMax <= UNSHADED_MAX ? ', dashed when very unstable' : ''}).</li>
        <li>Total column: the row's share of the base (vertical %, table %), its weighted count and respondents.</li>
        ${layout.notes.map((note) => html`<li>${note}</li>`)}
      </ul>
    </div>${raoScott}
  </div>
  ${chartSection(table, display)}`;
}

/** The table's chart: grouped (or, for one banner variable, stacked) bars of the vertical %, as `crosstab table --chart svg` draws it. */
function chartSection(table: TableJson, display: DisplayOptions): Raw {
  let svg: string;
  try {
    const { result, statistics } = tableFromJson(table);
    svg = chartToSVG(tableChart(result, statistics!, display));
  } catch (error) {
    if (!isCrosstabError(error)) throw error;
    return html`<section class="chart" aria-labelledby="chart-heading"><h3 id="chart-heading">Chart</h3><p class="muted">No chart: ${error.message}. ${error.details.hint ?? ''}</p></section>`;
  }
  return html`<section class="chart-section" aria-labelledby="chart-heading">
    <h3 id="chart-heading">Chart</h3>
    <div class="chart-scroll" id="result-chart" tabindex="0" role="region" aria-label="Chart of the table">${raw(svg.replace(/^<\?xml[^>]*>\s*/, ''))}</div>
  </section>`;
}
