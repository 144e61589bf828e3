import { CrosstabError, ErrorCode } from '../errors.js';
import type { StabilityLevel, TableResult } from '../facade/types.js';
import { formatCount, formatPercent, markerLegend, stabilityMarker, type DisplayOptions } from './display.js';
import type { TableStatistics } from './table-statistics.js';
import { variableHeadings } from './distinct-labels.js';
import { formatNumber } from '../text/number-text.js';
import { xmlEscaped } from '../text/xml-text.js';

/** One banner column of a chart: its label, its base (base AND column) and its low-base level. */
export interface ChartSeries {
  /** Index into the table's columns. */
  column: number;
  label: string;
  /** Σw / units of base AND column. */
  weightedBase: number;
  respondents: number;
  stability: StabilityLevel;
}

/** One row category of a chart panel. */
export interface ChartCategory {
  /** Index into the table's rows. */
  row: number;
  label: string;
}

/**
 * The chart of one row variable (or of the table's expression rows): per category and
 * banner column the column proportion, `values[category][series]` (0–1, NaN where undefined),
 * exactly the table's `columnPct`.
 */
export interface ChartPanel {
  /** The row variable's label (or name); 'Rows' for expression rows. */
  title: string;
  variable?: string;
  /**
   * `grouped`: a cluster of bars per category, one per banner column. `stacked`: one bar
   * per banner column made of its categories, when the banner is one variable and the rows
   * one single-response variable (the categories then add up to the column).
   */
  kind: 'grouped' | 'stacked';
  categories: ChartCategory[];
  values: number[][];
}

/** A table as charts: one panel per row variable, the banner columns as series. */
export interface TableChart {
  title: string;
  /** The base line: expression, respondents and projected audience. */
  baseText: string;
  /** The low-base marker legend with the dataset's thresholds. */
  markerText: string;
  series: ChartSeries[];
  panels: ChartPanel[];
}

/** Most bars (categories × banner columns) in one panel: a chart past this is no longer readable. */
export const CHART_MAX_BARS = 2_000;

/**
 * The chart model of a table: the banner columns (base AND column) as series, and per row
 * variable a panel of its categories' column proportions (`statistics.columnPct`, which
 * must have been computed: `vpct`).
 */
export function tableChart(result: TableResult, statistics: TableStatistics, display: DisplayOptions = {}): TableChart {
  const columnPct = statistics.columnPct;
  if (columnPct === undefined) {
    throw new CrosstabError(ErrorCode.invalidOption, 'a chart shows the vertical % (vpct), which these statistics do not hold', { field: 'stats', hint: 'Add vpct to the statistics.' });
  }
  const width = result.columns.length;
  const series = result.columns.map((entry, column): ChartSeries => {
    const total = result.columnTotals[column]!;
    return { column, label: entry.label, weightedBase: total.weighted / result.units, respondents: total.respondents, stability: total.stability };
  });
  const headingOf = variableHeadings(result, display.variableLabels);
  const bannerVariables = new Set(result.columns.map((entry) => entry.variable ?? `expr:${entry.expr}`));
  const panels: ChartPanel[] = [];
  let start = 0;
  while (start < result.rows.length) {
    const variable = result.rows[start]!.variable;
    let end = start + 1;
    while (end < result.rows.length && result.rows[end]!.variable === variable) end++;
    const rows = result.rows.slice(start, end);
    if (rows.length * width > CHART_MAX_BARS) {
      throw new CrosstabError(ErrorCode.invalidOption, `the chart of ${variable ?? 'the expression rows'} would have ${formatNumber(rows.length * width, 0)} bars, more than the ${formatNumber(CHART_MAX_BARS, 0)} a chart may have`, {
        field: 'chart',
        limit: CHART_MAX_BARS,
        hint: 'Chart fewer row categories or banner columns.',
      });
    }
    const stacked = variable !== undefined && bannerVariables.size === 1 && result.columns[0]!.variable !== undefined && !rows.some((entry) => entry.multi);
    panels.push({
      title: variable === undefined ? 'Rows' : headingOf(variable),
      ...(variable !== undefined ? { variable } : {}),
      kind: stacked ? 'stacked' : 'grouped',
      categories: rows.map((entry, index) => ({ row: start + index, label: entry.label })),
      values: rows.map((_, index) => series.map((_s, column) => columnPct[(start + index) * width + column]!)),
    });
    start = end;
  }
  const total = result.total;
  const baseText = `Base: ${result.base === '*' ? 'all respondents' : result.base} · ${formatCount(total.respondents, 0)} respondents · weighted ${formatCount(total.weighted / result.units)}${result.weight === null ? ' (unweighted)' : ''}`;
  return { title: display.title ?? 'Table', baseText, markerText: markerLegend(result.stability), series, panels };
}

/** A series' label with its low-base marker and base: `Male* (n=45)`. */
export function seriesLabel(series: ChartSeries): string {
  return `${series.label}${stabilityMarker(series.stability)} (n=${formatCount(series.respondents, 0)})`;
}

/** Colours of the series (or, stacked, of the categories), distinguishable by colour-blind readers (Okabe–Ito order). */
export const CHART_COLOURS = ['0072B2', 'E69F00', '009E73', 'CC79A7', '56B4E9', 'D55E00', 'F0E442', '000000', '999999', '882255', '44AA99', '332288'];

export function chartColour(index: number): string {
  return CHART_COLOURS[index % CHART_COLOURS.length]!;
}

/** Text on a segment of this colour: black on the light ones, white on the dark (contrast above 4.5:1). */
function textOn(index: number): string {
  return ['E69F00', 'F0E442', '56B4E9', '999999', '44AA99', 'CC79A7', '009E73'].includes(chartColour(index)) ? '#000000' : '#ffffff';
}

const escape = xmlEscaped;

const LABEL_WIDTH = 220;
const PLOT_WIDTH = 440;
const BAR = 14;
const GAP = 10;
const FONT = 'font-family="Helvetica, Arial, sans-serif"';

/**
 * The chart as an SVG document of horizontal bars: a panel per row variable (grouped: a
 * cluster per category, a bar per banner column, its value as text beside it; stacked: a bar
 * per banner column made of its categories, the value inside each segment wide enough), a legend, the base line and
 * the low-base markers (`*`, `**`; bars over 30 respondents or fewer drawn pale). Readable by a
 * screen reader: role="img", <title> and <desc>, and an aria-label on every bar. Each bar
 * carries its exact proportion in `data-value` and its table position in `data-row` and
 * `data-column`.
 */
export function chartToSVG(chart: TableChart): string {
  const width = LABEL_WIDTH + PLOT_WIDTH + 80;
  const body: string[] = [];
  let y = 30;
  body.push(`<text x="10" y="${y}" font-size="16" font-weight="bold" ${FONT}>${escape(chart.title)}</text>`);
  y += 20;
  body.push(`<text x="10" y="${y}" font-size="12" ${FONT}>${escape(chart.baseText)}</text>`);
  y += 10;
  for (const [index, panel] of chart.panels.entries()) {
    y += 24;
    body.push(`<g role="group" aria-label="${escape(`${panel.title}: vertical % by ${chart.series.map((s) => s.label).join(', ')}`)}" data-panel="${index}">`);
    body.push(`<text x="10" y="${y}" font-size="14" font-weight="bold" ${FONT}>${escape(panel.title)} — vertical %</text>`);
    y += 10;
    const legend = panel.kind === 'stacked' ? panel.categories.map((category) => category.label) : chart.series.map(seriesLabel);
    y = drawLegend(body, legend, y);
    y = panel.kind === 'stacked' ? drawStacked(body, chart, panel, y) : drawGrouped(body, chart, panel, y);
    body.push('</g>');
  }
  y += 24;
  body.push(`<text x="10" y="${y}" font-size="11" ${FONT}>${escape(chart.markerText)}</text>`);
  y += 14;
  const height = y + 10;
  const desc = `${chart.baseText}. ${chart.panels.map((panel) => `${panel.title}: ${panel.kind} bars of the vertical % of ${panel.categories.length} categories by ${chart.series.length} banner columns`).join('; ')}. ${chart.markerText}.`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title chart-desc">`,
    `<title id="chart-title">${escape(chart.title)}</title>`,
    `<desc id="chart-desc">${escape(desc)}</desc>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function drawLegend(body: string[], labels: string[], top: number): number {
  let x = 10;
  let y = top + 6;
  body.push('<g role="list" aria-label="legend">');
  for (const [index, label] of labels.entries()) {
    const size = 24 + label.length * 6.5;
    if (x + size > LABEL_WIDTH + PLOT_WIDTH + 70) {
      x = 10;
      y += 18;
    }
    body.push(`<g role="listitem"><rect x="${x}" y="${y}" width="12" height="12" fill="#${chartColour(index)}"/><text x="${x + 16}" y="${y + 10}" font-size="11" ${FONT}>${escape(label)}</text></g>`);
    x += size;
  }
  body.push('</g>');
  return y + 22;
}

const pale = (stability: StabilityLevel) => (stability === 'very-unstable' ? ' fill-opacity="0.4"' : '');

function bar(x: number, y: number, w: number, colour: number, value: number, stability: StabilityLevel, label: string, row: number, column: number): string {
  const aria = `${label}: ${formatPercent(value)}`;
  return `<rect x="${x.toFixed(2)}" y="${y}" width="${Number.isFinite(value) ? w.toFixed(2) : '0'}" height="${BAR}" fill="#${chartColour(colour)}"${pale(stability)} role="img" aria-label="${escape(aria)}" data-row="${row}" data-column="${column}" data-value="${Number.isFinite(value) ? String(value) : 'NaN'}"><title>${escape(aria)}</title></rect>`;
}

function drawGrouped(body: string[], chart: TableChart, panel: ChartPanel, top: number): number {
  const finite = panel.values.flat().filter(Number.isFinite);
  const max = Math.max(0.1, Math.ceil(Math.max(0, ...finite) * 10) / 10);
  const scale = PLOT_WIDTH / max;
  let y = top;
  drawAxis(body, max, top - 4, top + panel.categories.length * (chart.series.length * BAR + GAP));
  for (const [index, category] of panel.categories.entries()) {
    const clusterHeight = chart.series.length * BAR;
    body.push(`<text x="${LABEL_WIDTH - 8}" y="${y + clusterHeight / 2 + 4}" font-size="11" text-anchor="end" ${FONT}>${escape(category.label)}</text>`);
    for (const [s, series] of chart.series.entries()) {
      const value = panel.values[index]![s]!;
      const w = Number.isFinite(value) ? value * scale : 0;
      body.push(bar(LABEL_WIDTH, y, w, s, value, series.stability, `${category.label}, ${series.label}${stabilityMarker(series.stability)}`, category.row, series.column));
      body.push(`<text x="${(LABEL_WIDTH + w + 4).toFixed(2)}" y="${y + BAR - 3}" font-size="10" ${FONT} data-row="${category.row}" data-column="${series.column}">${escape(formatPercent(value) + stabilityMarker(series.stability))}</text>`);
      y += BAR;
    }
    y += GAP;
  }
  return y + 14;
}

function drawStacked(body: string[], chart: TableChart, panel: ChartPanel, top: number): number {
  const scale = PLOT_WIDTH;
  let y = top;
  drawAxis(body, 1, top - 4, top + chart.series.length * (BAR + 8 + GAP));
  for (const [s, series] of chart.series.entries()) {
    body.push(`<text x="${LABEL_WIDTH - 8}" y="${y + BAR - 3}" font-size="11" text-anchor="end" ${FONT}>${escape(seriesLabel(series))}</text>`);
    let x = LABEL_WIDTH;
    for (const [index, category] of panel.categories.entries()) {
      const value = panel.values[index]![s]!;
      const w = Number.isFinite(value) ? value * scale : 0;
      body.push(bar(x, y, w, index, value, series.stability, `${series.label}${stabilityMarker(series.stability)}, ${category.label}`, category.row, series.column));
      // The value as text under its segment when the segment is too narrow to hold it.
      if (w >= 30) body.push(`<text x="${(x + w / 2).toFixed(2)}" y="${y + BAR - 3}" font-size="9" text-anchor="middle" fill="${textOn(index)}" ${FONT} data-row="${category.row}" data-column="${series.column}">${escape(formatPercent(value, 0))}</text>`);
      x += w;
    }
    y += BAR + 8 + GAP;
  }
  return y + 14;
}

function drawAxis(body: string[], max: number, top: number, bottom: number): void {
  for (let tick = 0; tick <= 4; tick++) {
    const x = LABEL_WIDTH + (PLOT_WIDTH * tick) / 4;
    body.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${bottom}" stroke="#dddddd" aria-hidden="true"/>`);
    body.push(`<text x="${x}" y="${bottom + 12}" font-size="9" text-anchor="middle" fill="#555555" ${FONT} aria-hidden="true">${formatPercent((max * tick) / 4, 0)}</text>`);
  }
}
