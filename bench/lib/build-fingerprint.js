// What a built dataset answers with, apart from where and when it was built: its metadata
// (variables, codes, weights...) less `source`, `name` and `createdAt`, and every buffer's
// name, kind, count and XXH64 hash. Two builds with equal fingerprints give the same answers.
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { RecordBatchReader } from 'apache-arrow';

export async function buildFingerprint(path) {
  const reader = RecordBatchReader.from(await readFile(path));
  reader.open();
  const { source, name, createdAt, ...meta } = JSON.parse(reader.schema.metadata.get('crosstab.meta'));
  const hash = createHash('sha256').update(JSON.stringify(meta));
  for (const batch of reader) {
    const [names, kinds, counts, hashes] = ['name', 'kind', 'count', 'hash'].map((column) => batch.getChild(column));
    for (let row = 0; row < batch.numRows; row++) hash.update(`${names.get(row)}\0${kinds.get(row)}\0${counts.get(row)}\0${hashes.get(row)}\n`);
  }
  return hash.digest('hex');
}
