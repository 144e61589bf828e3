// The modules themselves, not the package's index (which loads all of Arrow, a tenth of a second).
import { Field } from 'apache-arrow/schema';
import { Binary, Uint32, Uint8, Utf8 } from 'apache-arrow/type';

/**
 * The columns of the buffer table, in file order. `data` comes first so that a writer can
 * stream every buffer's bytes before it knows their hashes, and a reader can read the
 * bytes straight into kernel memory with one read per batch.
 */
export const bufferFields = [
  new Field('data', new Binary(), false),
  new Field('name', new Utf8(), false),
  new Field('kind', new Uint8(), false),
  new Field('count', new Uint32(), false),
  new Field('hash', new Utf8(), false),
];
