import type { AxisEntry, TableResult } from '../facade/types.js';
import type { TableStatistics } from './table-statistics.js';
import { nameText } from '../text/expression-text.js';

/** One stub table of a tab book: the stub's categories down, the banner across. */
export interface TabbookTable {
  /** 1-based table number, in stub order. */
  number: number;
  /** The stub variable. */
  stub: string;
  /** The stub's label from the codebook, else its name. */
  title: string;
  result: TableResult;
  statistics: TableStatistics;
}

/**
 * A tab book: one banner (several variables side by side, each with its categories, plus
 * the Total column every table has) across many stub tables, all over one base.
 */
export interface Tabbook {
  /** The dataset's name and survey. */
  title: string;
  base: string;
  weight: string | null;
  /** The banner's columns, as every table has them. */
  banner: AxisEntry[];
  /** Variable labels by name (banner headings, stub titles). */
  variableLabels: Readonly<Record<string, string>>;
  tables: TabbookTable[];
  /** Variables `stubs: 'all'` left out, and why. */
  skipped: Array<{ variable: string; reason: string }>;
}

/** Where a tab book goes: XLSX (one sheet per table or one long sheet), HTML, long CSV, JSON or PowerPoint (a slide per table). */
export const TABBOOK_FORMATS = ['xlsx', 'html', 'csv', 'json', 'pptx'] as const;
export type TabbookFormat = (typeof TABBOOK_FORMATS)[number];
export const TABBOOK_LAYOUTS = ['sheets', 'long'] as const;
/** XLSX layout: `sheets` puts each table on a sheet of its own, `long` all tables on one sheet under one frozen banner. */
export type TabbookLayout = (typeof TABBOOK_LAYOUTS)[number];

/** A table's title, its stub variable named as an expression reads it: `Degree (degree)`, `Negation ("not")`. */
export function tabbookTitle(table: TabbookTable): string {
  return table.title === table.stub ? nameText(table.stub) : `${table.title} (${nameText(table.stub)})`;
}
