import { basename } from 'node:path';
import { CrosstabError, ErrorCode } from '../errors.js';
import { openDataset, type Dataset, type OpenOptions } from '../facade/dataset.js';

/** Inputs of `crosstab build` that are never compiled datasets. */
const SOURCE_FILE = /\.(csv|csv\.gz|tsv|tsv\.gz|txt|sav|zsav|parquet)$/i;

/**
 * Opens the compiled dataset a command was given. A survey file (CSV, SPSS, Parquet) gets an
 * error saying to compile it with `crosstab build` first, instead of a corrupt-file error.
 */
export async function openCompiled(path: string, options: OpenOptions = {}): Promise<Dataset> {
  if (SOURCE_FILE.test(path)) {
    const out = `${basename(path).replace(SOURCE_FILE, '')}.arrow`;
    throw new CrosstabError(ErrorCode.invalidOption, `${path} is a survey file, not a compiled dataset`, {
      field: '<dataset>',
      hint: `Compile it first: \`crosstab build ${path} --weight <column> --survey <code> --out ${out}\`, then use ${out}.`,
    });
  }
  return openDataset(path, options);
}
