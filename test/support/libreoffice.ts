// LibreOffice as the peer that opens our workbooks: soffice --headless converts every sheet of
// an XLSX file to CSV, which is read back as the cells' texts.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse as parseCSV } from 'csv-parse/sync';
import { expect } from 'vitest';

/** soffice's path, or undefined where LibreOffice is not installed. */
export const soffice: string | undefined = spawnSync('sh', ['-c', 'command -v soffice'], { encoding: 'utf8' }).stdout.trim() || undefined;

/** Under CI=true a missing soffice fails the test that needs it; elsewhere that test is skipped. */
export const skipOffice = soffice === undefined && process.env.CI !== 'true';

/**
 * Every sheet of `xlsx` as LibreOffice Calc reads it: its rows of cell texts (as shown, UTF-8),
 * by sheet name. `work` holds LibreOffice's profile and the CSV files.
 */
export function officeSheets(xlsx: string, work: string): Map<string, string[][]> {
  expect(soffice, 'soffice (Debian libreoffice-calc-nogui) is required').toBeDefined();
  const out = join(work, `csv-${basename(xlsx)}`);
  mkdirSync(out, { recursive: true });
  // 44 comma, 34 quote, 76 UTF-8, text as shown, every sheet (-1) to <name>-<sheet>.csv.
  const converted = spawnSync(soffice!, [`-env:UserInstallation=file://${join(work, 'office-profile')}`, '--headless', '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1', '--outdir', out, xlsx], { encoding: 'utf8', timeout: 150_000 });
  expect(converted.status, converted.stderr).toBe(0);
  const stem = `${basename(xlsx).replace(/\.xlsx$/, '')}-`;
  const sheets = new Map<string, string[][]>();
  for (const file of readdirSync(out).filter((name) => name.startsWith(stem) && name.endsWith('.csv'))) {
    sheets.set(file.slice(stem.length, -'.csv'.length), parseCSV(readFileSync(join(out, file), 'utf8'), { relax_column_count: true }) as string[][]);
  }
  expect(sheets.size, `LibreOffice wrote no sheet of ${xlsx}: ${converted.stdout}`).toBeGreaterThan(0);
  return sheets;
}
