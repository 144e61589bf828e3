import type { TableResult } from '../facade/types.js';
import { formatCount, formatPercent, lettersLegend, stabilityMarker, type DisplayOptions } from './display.js';
import { chartColour, seriesLabel, tableChart, type ChartPanel, type TableChart } from './table-chart.js';
import type { TableStatistics } from './table-statistics.js';
import { xmlText } from '../text/xml-text.js';
import { rewriteChartSheets, type ChartSheetTexts } from './pptx-chart-sheets.js';
import { bannerItems, distinctLabels, variableHeadings } from './distinct-labels.js';
import { nameText } from '../text/expression-text.js';

/** One table to put on slides: its cells, statistics (with `vpct`) and display. */
export interface PptxTable {
  result: TableResult;
  statistics: TableStatistics;
  display?: DisplayOptions;
}

/**
 * Tables as the bytes of a PowerPoint deck (pptxgenjs, loaded on the first call): one slide
 * per row variable of each table, holding its title, the base, a native (editable) bar chart
 * whose data sheet holds the column proportions (`columnPct`, shown as percentages), and the
 * table as a native table (banner, base rows, vertical % with low-base markers and
 * significance letters). Control characters, which XML cannot hold, are left out of every text
 * (as the XLSX leaves them out). Built in memory; rejects, never resolves with part of a deck.
 */
export async function tablesToPPTX(tables: readonly PptxTable[]): Promise<Uint8Array> {
  const module = await import('pptxgenjs');
  // The CommonJS build under ESM interop: the class is the default export, or its default.
  const loaded = module.default as unknown as { default?: unknown };
  const PptxGenJS = (loaded.default ?? loaded) as typeof module.default.default;
  const pres = new PptxGenJS();
  pres.layout = 'LAYOUT_WIDE';
  pres.title = xmlText(tables[0]?.display?.title ?? 'Tables');
  const charts = tables.map((table) => tableChart(table.result, table.statistics, table.display));
  // The slide titles are the deck's contents: row variables labelled alike, each by its name as well.
  const titles = distinctLabels(charts.flatMap((chart) => chart.panels.map((panel) => ({ label: panel.title, name: panel.variable === undefined ? panel.title : nameText(panel.variable) }))));
  const sheets: ChartSheetTexts[] = [];
  for (const [t, table] of tables.entries()) {
    const chart = charts[t]!;
    for (const panel of chart.panels) sheets.push(addSlide(pres, chart, { ...panel, title: titles[sheets.length]! }, table));
  }
  const bytes = (await pres.write({ outputType: 'nodebuffer' })) as Buffer;
  return rewriteChartSheets(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), sheets);
}

type Presentation = import('pptxgenjs').default;

/** One slide of a panel; the texts of its chart's data sheet. */
function addSlide(pres: Presentation, chart: TableChart, panel: ChartPanel, table: PptxTable): ChartSheetTexts {
  const slide = pres.addSlide();
  slide.addText(xmlText(`${panel.title} by ${bannerTitle(table)}`), { x: 0.4, y: 0.2, w: 12.5, h: 0.5, fontSize: 20, bold: true, color: '1F3864' });
  slide.addText(xmlText(`${chart.title} · ${chart.baseText}`), { x: 0.4, y: 0.7, w: 12.5, h: 0.3, fontSize: 11, color: '404040' });
  const stacked = panel.kind === 'stacked';
  // Grouped: a series per banner column over the categories; stacked: a series per category over the banner columns.
  const data = stacked
    ? panel.categories.map((category, index) => ({ name: xmlText(category.label), labels: chart.series.map((series) => xmlText(seriesLabel(series))), values: chart.series.map((_, s) => chartValue(panel.values[index]![s]!)) }))
    : chart.series.map((series, s) => ({ name: xmlText(seriesLabel(series)), labels: panel.categories.map((category) => xmlText(category.label)), values: panel.values.map((row) => chartValue(row[s]!)) }));
  // Taken before addChart, which makes each series' labels a list of label levels in place.
  const sheet: ChartSheetTexts = { names: data.map((series) => series.name), labels: [...(data[0]?.labels ?? [])] };
  const colours = data.map((_, index) => chartColour(index));
  slide.addChart(pres.ChartType.bar, data, {
    x: 0.4,
    y: 1.1,
    w: 6.4,
    h: 5.7,
    barDir: 'bar',
    barGrouping: stacked ? 'stacked' : 'clustered',
    chartColors: colours,
    // The first category on top (typed as minMax only; pptxgenjs writes the value as given).
    catAxisOrientation: 'maxMin' as 'minMax',
    valAxisLabelFormatCode: '0%',
    valAxisMinVal: 0,
    ...(stacked ? { valAxisMaxVal: 1 } : {}),
    // Values on the bars while they can be read; past 40 bars the table beside gives them.
    showValue: panel.categories.length * chart.series.length <= 40,
    dataLabelFormatCode: stacked ? '0%' : '0.0%',
    dataLabelFontSize: 8,
    catAxisLabelFontSize: 9,
    valAxisLabelFontSize: 9,
    showLegend: true,
    legendPos: 'b',
    legendFontSize: 9,
    showTitle: true,
    title: xmlText(`${panel.title}: vertical %`),
    titleFontSize: 12,
  });
  const first = 1.4;
  // The label column, the Total column, then the banner's columns.
  const colW = [first, ...[null, ...chart.series].map(() => (5.9 - first) / (chart.series.length + 1))];
  slide.addTable(tableRows(chart, panel, table), { x: 7.0, y: 1.1, w: 5.9, colW, fontSize: 8, border: { type: 'solid', pt: 0.5, color: 'BFBFBF' }, autoPage: false, margin: 0.03 });
  const notes = [chart.markerText, ...(table.statistics.letters !== undefined ? [lettersLegend(table.statistics)] : [])];
  slide.addText(xmlText(notes.join('\n')), { x: 0.4, y: 6.85, w: 12.5, h: 0.5, fontSize: 8, color: '595959' });
  return sheet;
}

/**
 * A chart value for the data sheet: the proportion, or null (an empty cell) where undefined.
 * A 0 goes as the text '0': pptxgenjs writes each value of the embedded workbook as `value || ''`,
 * which leaves a 0 % an empty cell (undefined, as a zero denominator is) once the chart's data is
 * edited; the chart's own values and the sheet read the text as the number 0.
 */
function chartValue(value: number): number | null {
  if (!Number.isFinite(value)) return null;
  return value === 0 ? ('0' as unknown as number) : value;
}

/** The banner's variables and expressions, those labelled alike each followed by its name or expression. */
function bannerTitle(table: PptxTable): string {
  return distinctLabels(bannerItems(table.result.columns, table.display?.variableLabels ?? {})).join(', ');
}

type Cell = { text: string; options?: Record<string, unknown> };

function tableRows(chart: TableChart, panel: ChartPanel, table: PptxTable): Cell[][] {
  const { result, statistics } = table;
  const head = { bold: true, fill: { color: 'D9E1F2' }, align: 'center' };
  const rows: Cell[][] = [];
  // The banner variables over their columns.
  const headingOf = variableHeadings(result, table.display?.variableLabels);
  const groups: Cell[] = [{ text: '' }, { text: '' }];
  for (let column = 0; column < result.columns.length; ) {
    const variable = result.columns[column]!.variable;
    let end = column + 1;
    while (variable !== undefined && end < result.columns.length && result.columns[end]!.variable === variable) end++;
    groups.push({ text: variable === undefined ? '' : headingOf(variable), options: { ...head, colspan: end - column } });
    column = end;
  }
  if (result.columns.some((entry) => entry.variable !== undefined)) rows.push(groups);
  const base = { align: 'right', italic: true };
  rows.push([{ text: panel.title, options: { bold: true } }, { text: 'Total', options: head }, ...chart.series.map((series) => ({ text: `${series.label}${statistics.columnLetters[series.column] ? ` (${statistics.columnLetters[series.column]})` : ''}`, options: head }))]);
  rows.push([{ text: 'Base (respondents)', options: { italic: true } }, { text: formatCount(result.total.respondents, 0) + stabilityMarker(result.total.stability), options: base }, ...chart.series.map((series) => ({ text: formatCount(series.respondents, 0) + stabilityMarker(series.stability), options: base }))]);
  rows.push([{ text: 'Base (weighted)', options: { italic: true } }, { text: formatCount(result.total.weighted / result.units), options: base }, ...chart.series.map((series) => ({ text: formatCount(series.weightedBase), options: base }))]);
  const width = result.columns.length;
  for (const [index, category] of panel.categories.entries()) {
    const rowTotal = result.rowTotals[category.row]!;
    rows.push([
      { text: category.label },
      // The Total column: the row's share of the base (as the XLSX's Total column).
      { text: `${formatPercent(statistics.rowShare[category.row]!)}${stabilityMarker(rowTotal.stability)}`, options: { align: 'right', bold: true } },
      ...chart.series.map((series, s) => {
        const letters = statistics.letters?.[category.row * width + series.column] ?? '';
        return { text: `${formatPercent(panel.values[index]![s]!)}${stabilityMarker(series.stability)}${letters ? ` ${letters}` : ''}`, options: { align: 'right' } };
      }),
    ]);
  }
  return rows.map((row) => row.map((cell) => ({ ...cell, text: xmlText(cell.text) })));
}
