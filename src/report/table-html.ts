import type { Cell, TableResult } from '../facade/types.js';
import { index as indexOf } from '../stats/index.js';
import { columnGroups } from './column-groups.js';
import { rowHeadings } from './distinct-labels.js';
import {
  banners,
  displayedStats,
  formatCount,
  formatPercent,
  lettersLegend,
  markerLegend,
  missingNote,
  statisticsNotes,
  stabilityMarker,
  varianceLegend,
  type DisplayOptions,
} from './display.js';
import type { TableStatistics } from './table-statistics.js';

const WHITE = [255, 255, 255] as const;
/** Diverging ends (ColorBrewer RdBu 4393c3 / d6604d): light enough for black text (contrast > 5:1). */
const UNDER = [67, 147, 195] as const;
const OVER = [214, 96, 77] as const;
const UNDEFINED_COLOUR = 'rgb(224, 224, 224)';
/** Index values shown on the legend's colour ramp. */
export const LEGEND_INDEXES = [50, 67, 80, 100, 125, 150, 200] as const;

/**
 * Heat-map colour of an index: white at 100, blue below, red above, on a log scale
 * saturating at 50 and 200 (so 80 and 125 are equally far from white). Undefined
 * (NaN) is grey. Returned as CSS `rgb(r, g, b)`, as `getComputedStyle` reports it.
 */
export function indexColour(value: number): string {
  if (!Number.isFinite(value) && value !== Number.POSITIVE_INFINITY) return UNDEFINED_COLOUR;
  const t = value <= 0 ? -1 : Math.max(-1, Math.min(1, Math.log2(value / 100)));
  const end = t < 0 ? UNDER : OVER;
  const weight = Math.abs(t);
  const [r, g, b] = WHITE.map((channel, i) => Math.round(channel + (end[i]! - channel) * weight));
  return `rgb(${r}, ${g}, ${b})`;
}

/**
 * The table as one self-contained HTML page (inline CSS, no scripts, no external
 * assets): a heat map of index values (white = 100, blue under, red over), the
 * vertical % (or weighted audience) in each cell with its index and significance
 * letters, `*` / `**` low-base markers, a Total column, a Base row and a legend.
 * Every cell has `data-row`, `data-column`, `data-index` and a tooltip with all its figures.
 */
export function tableToHTML(result: TableResult, statistics?: TableStatistics, options: DisplayOptions = {}): string {
  const title = options.title ?? `Crosstab of ${result.base}`;
  return htmlPage(title, tableToHTMLSection(result, statistics, options));
}

/** A page around `body`: doctype, title, the tables' inline CSS. */
export function htmlPage(title: string, body: string): string {
  const head = ['<!doctype html>', '<html lang="en">', '<head>', '<meta charset="utf-8">', `<title>${escapeHTML(title)}</title>`, `<style>${CSS}</style>`, '</head>', '<body>'];
  return `${head.join('\n')}\n${body}\n</body>\n</html>\n`;
}

/** The body of tableToHTML's page (heading, table, legend), for pages holding several tables. */
export function tableToHTMLSection(result: TableResult, statistics?: TableStatistics, options: DisplayOptions = {}): string {
  const width = result.columns.length;
  const groups = statistics?.groups ?? columnGroups(result.columns);
  const heads = banners(result, groups, options);
  const stats = displayedStats(statistics);
  const columnPct = statistics?.columnPct;
  const letters = statistics?.letters;
  const indexAt = (r: number, c: number) =>
    statistics?.index ? statistics.index[r * width + c]! : indexOf(result.cell(r, c), result.rowTotals[r]!, result.columnTotals[c]!, result.total);
  const marker = (cell: Cell) => {
    const text = stabilityMarker(cell.stability);
    return text ? `<span class="marker">${text}</span>` : '';
  };
  const title = options.title ?? `Crosstab of ${result.base}`;
  const html: string[] = [];
  html.push(`<h1>${escapeHTML(title)}</h1>`);
  html.push(
    `<p class="meta">Base <code>${escapeHTML(result.base)}</code> · weight ${escapeHTML(result.weight ?? 'none (unweighted)')} · units ${result.units} · ${formatCount(result.total.respondents, 0)} respondents</p>`,
  );
  html.push(`<p class="meta percent-base">${escapeHTML(missingNote(result, statistics))}</p>`);
  html.push('<table class="crosstab">', '<thead>');
  html.push(
    `<tr><th class="corner" rowspan="2"></th><th class="total" rowspan="2">Total</th>${heads
      .map((banner) => `<th class="banner" colspan="${banner.columns.length}">${escapeHTML(banner.label)}</th>`)
      .join('')}</tr>`,
  );
  html.push(
    `<tr>${result.columns
      .map((column, c) => {
        const letter = statistics?.columnLetters[c];
        return `<th class="column" title="${escapeHTML(column.expr)}">${escapeHTML(column.label)}${letter ? ` <span class="letter">(${letter})</span>` : ''}</th>`;
      })
      .join('')}</tr>`,
  );
  html.push('</thead>', '<tbody>');
  html.push(
    `<tr class="base"><th scope="row">Base <span class="sub">weighted / respondents</span></th>${[result.total, ...result.columnTotals]
      .map((cell) => `<td>${formatCount(cell.weighted / result.units)}${marker(cell)}<span class="sub">${formatCount(cell.respondents, 0)}</span></td>`)
      .join('')}</tr>`,
  );
  const headings = rowHeadings(result, options.variableLabels);
  result.rows.forEach((row, r) => {
    const heading = headings[r];
    if (heading !== undefined) {
      html.push(`<tr class="row-banner"><th colspan="${width + 2}">${escapeHTML(heading)}</th></tr>`);
    }
    const rowTotal = result.rowTotals[r]!;
    const share = statistics ? statistics.rowShare[r]! : result.total.weighted === 0 ? Number.NaN : rowTotal.weighted / result.total.weighted;
    const cells = result.columns.map((_, c) => {
      const at = r * width + c;
      const cell = result.cell(r, c);
      const value = indexAt(r, c);
      const main = columnPct ? formatPercent(columnPct[at]!) : formatCount(cell.weighted / result.units);
      const tooltip = [
        `weighted ${formatCount(cell.weighted / result.units)}`,
        `respondents ${formatCount(cell.respondents, 0)}`,
        ...stats.map((stat) => `${stat.label} ${stat.format(stat.values[at]!)}`),
        ...(letters && letters[at] ? [`higher than ${letters[at]}`] : []),
        ...(cell.stability === 'stable' ? [] : [cell.stability]),
      ].join(' · ');
      const classes = ['cell', cell.stability === 'stable' ? '' : cell.stability].filter(Boolean).join(' ');
      return (
        `<td class="${classes}" data-row="${r}" data-column="${c}" data-index="${Number.isFinite(value) ? value : ''}" ` +
        `style="background-color: ${indexColour(value)}" title="${escapeHTML(tooltip)}">` +
        `<span class="main">${main}</span>${marker(cell)}` +
        `<span class="idx">${Number.isFinite(value) ? formatCount(value, 0) : '–'}</span>` +
        `${letters && letters[at] ? `<span class="sig">${letters[at]}</span>` : ''}</td>`
      );
    });
    html.push(
      `<tr><th scope="row" title="${escapeHTML(row.expr)}">${escapeHTML(row.label)}</th>` +
        `<td class="total">${columnPct ? formatPercent(share) : formatCount(rowTotal.weighted / result.units)}${marker(rowTotal)}<span class="sub">${formatCount(rowTotal.respondents, 0)}</span></td>` +
        `${cells.join('')}</tr>`,
    );
  });
  html.push('</tbody>', '</table>');
  html.push(legend(result, statistics, columnPct !== undefined));
  return html.join('\n');
}

function legend(result: TableResult, statistics: TableStatistics | undefined, hasPercent: boolean): string {
  const last = LEGEND_INDEXES.length - 1;
  const ramp = LEGEND_INDEXES.map((value, i) => {
    const text = i === 0 ? `≤${value}` : i === last ? `≥${value}` : String(value);
    return `<span class="swatch" style="background-color: ${indexColour(value)}">${text}</span>`;
  }).join('');
  const items = [
    `<div class="ramp">Index ${ramp}</div>`,
    `<p>Cell: ${hasPercent ? 'vertical % (share of the column)' : 'weighted audience'}, with the index below it (100 × vertical % ÷ the base's %; 100 = average). Total column: ${hasPercent ? "the row's share of the base" : 'base AND row'}, respondents below.</p>`,
    `<p>${escapeHTML(markerLegend(result.stability))}. Dashed outline: very unstable.</p>`,
  ];
  if (statistics?.letters) items.push(`<p>${escapeHTML(lettersLegend(statistics))}.</p>`);
  if (statistics?.columnPctSE || statistics?.designEffect || statistics?.letters) items.push(`<p>Variances: ${escapeHTML(varianceLegend(statistics))}.</p>`);
  for (const line of statistics ? statisticsNotes(statistics) : []) items.push(`<p>${escapeHTML(line)}.</p>`);
  return `<div class="legend">\n${items.join('\n')}\n</div>`;
}

/** Text as HTML (also in attributes). */
export function escapeHTML(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const CSS = `
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111; margin: 24px; background: #fff; }
h1 { font-size: 18px; margin: 0 0 4px; }
.meta { color: #444; margin: 0 0 16px; }
table.crosstab { border-collapse: collapse; font-variant-numeric: tabular-nums; }
.crosstab th, .crosstab td { border: 1px solid #d0d0d0; padding: 4px 8px; }
.crosstab thead th { background: #f4f4f4; font-weight: 600; text-align: center; }
.crosstab th.corner { background: #fff; border-top-color: #fff; border-left-color: #fff; }
.crosstab tbody th { text-align: left; font-weight: 500; background: #fafafa; white-space: nowrap; }
.crosstab tr.row-banner th { background: #ececec; font-weight: 600; }
.crosstab td { text-align: right; min-width: 64px; vertical-align: top; }
.crosstab td.total, .crosstab tr.base td { background: #f7f7f7; }
.crosstab td.very-unstable { outline: 1px dashed #333; outline-offset: -4px; }
.main { font-weight: 600; }
.idx, .sub { display: block; font-size: 11px; color: #333; }
.sig { display: block; font-size: 11px; font-weight: 700; color: #000; letter-spacing: 1px; }
.letter { font-weight: 400; color: #555; }
.marker { font-weight: 700; margin-left: 1px; }
.legend { margin-top: 16px; color: #222; max-width: 900px; }
.legend p { margin: 4px 0; }
.ramp { display: flex; align-items: center; gap: 2px; }
.swatch { display: inline-block; min-width: 40px; text-align: center; padding: 2px 4px; border: 1px solid #d0d0d0; font-size: 12px; }
`.trim();
