/**
 * crosstab-engine: exact, fast crosstabs over weighted survey data.
 *
 * ```ts
 * import { openDataset } from 'crosstab-engine';
 * const ds = await openDataset('gss.arrow');
 * const r = await ds.crosstab({ base: 'year=2024', targets: ['sex=2', 'degree=3..4'] });
 * ```
 */
export { openDataset, Dataset, MAX_TARGETS, DEFAULT_CELL_CACHE } from './facade/dataset.js';
export type { OpenOptions, CloseOptions } from './facade/dataset.js';
export { buildDataset } from './build/build.js';
export { appendRows } from './build/append.js';
export type { AppendOptions, AppendReport } from './build/append.js';
export { bundledDataset, bundledSource, BUNDLED_DATASETS } from './facade/bundled-datasets.js';
export type { BundledDatasetName } from './facade/bundled-datasets.js';
export { pushDataset } from './clickhouse/push.js';
export type { PushOptions, PushReport } from './clickhouse/push.js';
export { closePool } from './pool/pool.js';
export { kernelMemoryUsage } from './facade/kernel-memory.js';
export type { KernelMemoryUsage } from './facade/kernel-memory.js';
export { engineStats } from './facade/engine-stats.js';
export type { DatasetStats, EngineStats } from './facade/engine-stats.js';
export type { PoolStats } from './pool/pool.js';
export type { BuildOptions, BuildReport } from './build/build-options.js';
export { weightDataset } from './facade/weight.js';
export { exportColumns } from './facade/export-columns.js';
export type { ExportOptions, ExportReport } from './facade/export-columns.js';
export type { WeightMethod, WeightOptions, WeightReport } from './facade/weight.js';
export { toServiceResponse, stabilityFlag, ConditionalResult } from './facade/service-shape.js';
export type { ServiceResponse, ServiceResult } from './facade/service-shape.js';
export { parseExpression } from './query/parse.js';
export type { Expr } from './query/ast.js';
export { expandAudiences, namesOf, usesAudiences, MAX_AUDIENCE_DEPTH, MAX_EXPANDED_LENGTH } from './query/audiences.js';
export type { AudienceDefinition, AudienceLookup, ExpandedExpression, UsedAudience } from './query/audiences.js';
export { AUDIENCE_NAME } from './text/expression-text.js';
export { parseCodebook, readCodebook } from './dataset/build/codebook.js';
export type { Codebook, VariableDescription } from './dataset/build/codebook.js';
export { CrosstabError, ErrorCode, isCrosstabError, labelledHint, labelledMessage } from './errors.js';
export type { ErrorDetails } from './errors.js';
export type {
  Cell,
  CodeInfo,
  CrosstabQuery,
  CrosstabResult,
  DatasetInfo,
  DesignInfo,
  StabilityLevel,
  StabilityThresholds,
  ValueInfo,
  VariableInfo,
  AxisItem,
  AxisEntry,
  TableQuery,
  TableResult,
  MissingMode,
  PercentBase,
} from './facade/types.js';
export { DEFAULT_MISSING_LABEL } from './facade/types.js';
export { valueExpression, MAX_AXIS } from './facade/axes.js';
export { DEFAULT_TABBOOK_MAX_CELLS, tabbook, tabbookSize } from './report/tabbook.js';
export type { TabbookOptions, TabbookSize } from './report/tabbook.js';
export { expandTabbookAudiences, tabbookUsesAudiences } from './report/tabbook-audiences.js';
export type { TabbookAudiences } from './report/tabbook-audiences.js';
export { writeTabbook, TABBOOK_FORMATS, TABBOOK_LAYOUTS } from './report/index.js';
export type { Tabbook, TabbookTable, TabbookFormat, TabbookLayout, WriteTabbookOptions } from './report/index.js';
export { TableRenderer, TableAnswerStream, STREAM_BYTES_IN_FLIGHT } from './report/index.js';
export type { TableRendererOptions, TableAnswerFormat, TableAnswerOptions, StatisticsLimits } from './report/index.js';
export { STAT_NAMES, tableStatistics, columnGroups, tableToJSON, tableToCSV, tableToXLSX, tableToArrow, tableToArrowIPC, TABLE_METADATA_KEY, tableToText, tableToHTML, indexColour, tableJsonSchemas } from './report/index.js';
export type { StatName, TableStatistics, TableStatisticsOptions, ColumnComparison, ColumnGroup, TableJson, TableJsonAxisEntry, TableJsonCell, TableJsonComparison, TableJsonRaoScott, RaoScottTest, RaoScottNotDefined, VarianceKind, DisplayOptions, OpenApiSchema } from './report/index.js';
export { tableFromJson, bannerLayout, tableChart, chartToSVG, CHART_MAX_BARS, tablesToPPTX } from './report/index.js';
export type { BannerFigure, BannerLayout, BannerLine, ChartCategory, ChartPanel, ChartSeries, TableChart, PptxTable } from './report/index.js';
export type { DesignOptions, ReplicateType } from './dataset/build/design.js';
export type { LonelyPsu } from './stats/design-variance.js';
export type { TableDesign } from './stats/table-variance.js';
