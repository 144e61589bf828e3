import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { createGunzip } from 'node:zlib';

/**
 * Writes `copies` copies of a (gzip'd) CSV's rows under one header, as plain CSV: copy k
 * gets `k-` prefixed to the first column (an id such as ACS SERIALNO), so every copy is a
 * new set of respondents with the same answers. Streams; returns the rows written.
 */
export async function repeatCsv(input: string, output: string, copies: number): Promise<number> {
  const out = createWriteStream(output, { highWaterMark: 1 << 20 });
  let rows = 0;
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  for (let copy = 0; copy < copies; copy++) {
    const lines = createInterface({ input: createReadStream(input).pipe(createGunzip()), crlfDelay: Infinity });
    let header = true;
    let batch: string[] = [];
    for await (const line of lines) {
      if (header) {
        header = false;
        if (copy === 0) await write(`${line}\n`);
        continue;
      }
      if (line === '') continue;
      batch.push(copy === 0 ? line : `${copy}-${line}`);
      rows++;
      if (batch.length === 4096) {
        await write(`${batch.join('\n')}\n`);
        batch = [];
      }
    }
    if (batch.length > 0) await write(`${batch.join('\n')}\n`);
  }
  out.end();
  await once(out, 'finish');
  return rows;
}
