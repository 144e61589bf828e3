// The ACS PUMS person file as the ACS test files read it, made once per test run and shared
// (test/support/shared-builds.ts): a build of 2.7M respondents, or DuckDB's table of the CSV,
// is the slow part of those files. Only for files that read what they are given: a test whose
// point is the build itself (its report, its memory) builds its own.
import { rmSync, writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildDataset } from '../../src/build/build.js';
import type { BuildOptions } from '../../src/build/build-options.js';
import { acsCsv } from './paths.js';
import { sharedBuild } from './shared-builds.js';

/** A codebook given as its content (written beside the build while it runs). */
export type AcsBuildOptions = Omit<BuildOptions, 'out' | 'codebook'> & { codebook?: object };

/** The ACS built with `options`, once per run for all files that ask with the same options. Read only. */
export function acsDataset(options: AcsBuildOptions): Promise<string> {
  return sharedBuild('acs', JSON.stringify(options), async (out) => {
    const { codebook, ...rest } = options;
    if (codebook === undefined) return buildDataset(acsCsv, { ...rest, out });
    const codebookPath = `${out}.codebook.json`;
    writeFileSync(codebookPath, JSON.stringify(codebook));
    try {
      return await buildDataset(acsCsv, { ...rest, out, codebook: codebookPath });
    } finally {
      rmSync(codebookPath, { force: true });
    }
  });
}

/** The ACS build with the defaults (`crosstab build --weight PWGTP --survey ACS`). */
export const ACS_DEFAULT_BUILD: AcsBuildOptions = { weights: ['PWGTP'], survey: 'ACS' };

/**
 * A DuckDB database file holding the CSV as table `acs` (STATE, PUMA and SERIALNO as text,
 * every other column as DuckDB reads it), made once per run; open it with
 * `{ access_mode: 'READ_ONLY' }` (several processes may read it at once).
 */
export function acsDuckDb(): Promise<string> {
  const sql = `CREATE TABLE acs AS SELECT * FROM read_csv('${acsCsv.replaceAll("'", "''")}', header = true, types = {'STATE': 'VARCHAR', 'PUMA': 'VARCHAR', 'SERIALNO': 'VARCHAR'})`;
  return sharedBuild(
    'acs',
    sql,
    async (out) => {
      const instance = await DuckDBInstance.create(out);
      const connection = await instance.connect();
      await connection.run(sql);
      connection.closeSync();
      instance.closeSync();
    },
    '.duckdb',
  );
}
