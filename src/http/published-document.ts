/**
 * The OpenAPI document as GET /docs sends it: made once into bytes and, on first demand, into
 * its gzip and brotli forms, each with a strong entity tag.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

/** The content codings GET /docs answers in, best first (on equal preference the smaller wins). */
export type DocsCoding = 'br' | 'gzip' | 'identity';

/** One representation of the document: its bytes and its strong entity tag. */
export interface DocsRepresentation {
  readonly body: Buffer;
  readonly etag: string;
}

/** The document GET /docs serves, in each content coding. */
export interface PublishedDocument {
  /** The bytes of `coding`: made on its first request (off the event loop), then kept. */
  representation(coding: DocsCoding): DocsRepresentation | Promise<DocsRepresentation>;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * Brotli quality 9 and gzip level 9: once per document. Brotli's 11 saves a further ~8% of the
 * ~11 KB and costs ~7 times the CPU (about a second under load), which the first request waits for.
 */
function compress(identity: Buffer, coding: 'br' | 'gzip'): Promise<Buffer> {
  if (coding === 'gzip') return gzipAsync(identity, { level: 9 });
  return brotliAsync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: identity.byteLength, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } });
}

/**
 * The document `json` as GET /docs serves it. Entity tags are a hash of the JSON, one per
 * coding (`"<hash>"`, `"<hash>-gzip"`, `"<hash>-br"`): a strong tag names one exact byte
 * sequence, and a different document gets different tags.
 */
export function publishDocument(json: string): PublishedDocument {
  const identity = Buffer.from(json, 'utf8');
  const hash = createHash('sha256').update(identity).digest('hex').slice(0, 32);
  const made = new Map<DocsCoding, DocsRepresentation>([['identity', { body: identity, etag: `"${hash}"` }]]);
  const making = new Map<DocsCoding, Promise<DocsRepresentation>>();
  return {
    representation(coding) {
      const known = made.get(coding);
      if (known !== undefined) return known;
      let pending = making.get(coding);
      if (pending === undefined) {
        const compressed = coding === 'identity' ? Promise.resolve(identity) : compress(identity, coding);
        pending = compressed.then(
          (body) => {
            const representation = { body, etag: `"${hash}-${coding}"` };
            made.set(coding, representation);
            return representation;
          },
          // zlib does not fail on a buffer in memory; were it to, the document goes out uncompressed.
          () => made.get('identity') as DocsRepresentation,
        );
        making.set(coding, pending);
      }
      return pending;
    },
  };
}
