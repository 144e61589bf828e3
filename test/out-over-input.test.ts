// `--out` naming a file the command reads (the build's input or codebook, the append's new rows,
// by the same path or another name of the file) is refused before anything is read or written:
// the dataset renamed over it would replace the only copy of those answers. Before, both wrote
// the dataset there and exited 0.
import { linkSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRows, buildDataset, ErrorCode } from '../src/index.js';
import { rejection } from './support/rejection.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-out-over-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const csv = 'a,b,w\n1,x,1\n2,y,2\n3,x,3\n';

describe('--out over an input', () => {
  it('build: the input, another name of it, or the codebook is refused and left as it was', async () => {
    const input = join(dir, 'input.csv');
    const codebook = join(dir, 'codebook.json');
    const alias = join(dir, 'alias.csv');
    writeFileSync(input, csv);
    writeFileSync(codebook, '{"variables": {"a": {"label": "A"}}}');
    linkSync(input, alias);
    for (const [out, what] of [[input, 'the input'], [alias, 'the input'], [codebook, 'the codebook']] as const) {
      const error = await rejection(buildDataset(input, { weights: ['w'], survey: 'T', codebook, out }));
      expect(error).toMatchObject({ code: ErrorCode.invalidOption });
      expect(error.message).toContain(`is ${what}`);
    }
    expect(readFileSync(input, 'utf8')).toBe(csv);
    expect(readFileSync(codebook, 'utf8')).toContain('"label": "A"');
  });

  it('append: the new rows are refused and left as they were; the dataset itself may be replaced', async () => {
    const input = join(dir, 'first.csv');
    const wave = join(dir, 'wave.csv');
    const dataset = join(dir, 'first.arrow');
    writeFileSync(input, csv);
    writeFileSync(wave, 'a,b,w\n4,z,1\n');
    await buildDataset(input, { weights: ['w'], survey: 'T', out: dataset });
    const error = await rejection(appendRows(dataset, wave, { out: wave }));
    expect(error).toMatchObject({ code: ErrorCode.invalidOption });
    expect(error.message).toContain('is the new rows');
    expect(readFileSync(wave, 'utf8')).toBe('a,b,w\n4,z,1\n');
    expect((await appendRows(dataset, wave, { out: dataset })).respondents).toBe(4);
  });
});
