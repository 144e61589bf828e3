/** Derived statistics of a table and its output formats (JSON, CSV, Arrow, text, HTML, XLSX), and tab books. See docs/tables.md and docs/tabbooks.md. */
export { STAT_NAMES, normalizeStats } from './statistics.js';
export { tableStatistics } from './table-statistics.js';
export type { ColumnComparison, StatName, TableStatistics, TableStatisticsOptions } from './table-statistics.js';
export { columnGroups } from './column-groups.js';
export type { ColumnGroup } from './column-groups.js';
export { tableToJSON } from './table-json.js';
export type { TableJson, TableJsonAxisEntry, TableJsonCell, TableJsonComparison, TableJsonRaoScott } from './table-json.js';
export type { RaoScottTest } from './rao-scott-tests.js';
export type { VarianceKind } from './design-figures.js';
export { tableToCSV } from './table-csv.js';
export { TABLE_METADATA_KEY, tableToArrow, tableToArrowIPC } from './table-arrow.js';
export { tableToText } from './table-text.js';
export { LEGEND_INDEXES, indexColour, tableToHTML } from './table-html.js';
export type { DisplayOptions } from './display.js';
export { writeTabbook, formatOfPath } from './tabbook-output.js';
export type { WriteTabbookOptions } from './tabbook-output.js';
export { TABBOOK_FORMATS, TABBOOK_LAYOUTS } from './tabbook-model.js';
export type { Tabbook, TabbookTable, TabbookFormat, TabbookLayout } from './tabbook-model.js';
