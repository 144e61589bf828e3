// The ACS PUMS 2024 person CSV for the benches that add waves to a build of part of it: its
// path (or the bench skips, saying so), and its rows cut into consecutive parts, cached.
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip, createGzip } from 'node:zlib';
import { dataDir } from './datasets.js';

/** The ACS CSV's path; without it, prints that `bench` is skipped and exits. */
export function acsCsvOrSkip(bench) {
  try {
    return join(dataDir(), 'acs_pums_2024_person.csv.gz');
  } catch {
    console.warn(`SKIPPED: the ACS file is absent; the ${bench} bench needs it.`);
    process.exit(0);
  }
}

/**
 * The rows of `csv` cut at the given percents of them (e.g. [98, 99]: the first 98%, the next
 * 1%, the last 1%), each part a gzip'd CSV with the header, in `cache` under `names` (one per
 * part); made once, then found there.
 */
export async function acsParts(csv, cache, percents, names) {
  const paths = names.map((name) => join(cache, name));
  if (paths.every((path) => existsSync(path))) return paths;
  let total = -1;
  for await (const _ of createInterface({ input: createReadStream(csv).pipe(createGunzip()), crlfDelay: Infinity })) total++;
  const cuts = percents.map((percent) => Math.round((total * percent) / 100));
  const outputs = paths.map((path) => {
    const gzip = createGzip({ level: 1 });
    const file = createWriteStream(`${path}.tmp`);
    gzip.pipe(file);
    return { path, gzip, file };
  });
  let row = -1;
  for await (const line of createInterface({ input: createReadStream(csv).pipe(createGunzip()), crlfDelay: Infinity })) {
    if (row === -1) for (const output of outputs) output.gzip.write(`${line}\n`);
    else {
      const part = cuts.findIndex((cut) => row < cut);
      const output = outputs[part === -1 ? cuts.length : part];
      if (!output.gzip.write(`${line}\n`)) await once(output.gzip, 'drain');
    }
    row++;
  }
  for (const output of outputs) {
    output.gzip.end();
    await once(output.file, 'close');
    execFileSync('mv', [`${output.path}.tmp`, output.path]);
  }
  return paths;
}
