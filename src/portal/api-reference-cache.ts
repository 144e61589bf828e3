/**
 * The portal's API reference made once: the OpenAPI document is read and its reference
 * rendered on the first request (one at a time: requests meanwhile wait for it), then kept.
 * The public page (no session) is kept whole as bytes, with its gzip and brotli forms made on
 * first demand and a strong entity tag per coding; a signed-in page puts the kept reference
 * inside its own layout. A read that fails is not kept: the next request tries again.
 */
import { negotiateCoding } from '../http/docs-operation.js';
import { headerOf, matchesETag } from '../http/headers.js';
import type { HandlerHeaders } from '../http/headers.js';
import { publishDocument, type PublishedDocument } from '../http/published-document.js';
import { apiReferenceBody, apiReferenceLayout } from './api-reference-page.js';
import type { PageContext, Raw } from './html.js';

/** What the page's response varies on besides the URL: the coding, and the session cookie (a signed-in page has its own navigation). */
export const API_REFERENCE_VARY = 'Accept-Encoding, Cookie';

export interface ApiReferenceAnswer {
  status: 200 | 304;
  /** Headers of this answer (entity tag, coding); the caller adds the portal's own. */
  headers: Record<string, string>;
  body: string | Uint8Array;
}

export class ApiReferenceCache {
  /** The rendered reference for one document URL (it changes once, when the server learns its own URL). */
  private made: { jsonUrl: string; body: Promise<Raw> } | undefined;
  /** The public page as published bytes, for the same URL. */
  private published: { jsonUrl: string; page: Promise<PublishedDocument> } | undefined;

  constructor(private readonly read: () => Promise<unknown>) {}

  /** The reference body for `jsonUrl`, rendered once. */
  body(jsonUrl: string): Promise<Raw> {
    if (this.made?.jsonUrl === jsonUrl) return this.made.body;
    const made = { jsonUrl, body: this.read().then((document) => apiReferenceBody(document, jsonUrl)) };
    this.made = made;
    made.body.catch(() => {
      if (this.made === made) this.made = undefined;
    });
    return made.body;
  }

  /**
   * The page for `context`: with a signed-in user, its layout around the kept reference (no
   * entity tag: the page holds the session's form token); without one, the public page's kept
   * bytes in the coding Accept-Encoding prefers, or 304 when If-None-Match holds its tag.
   */
  async answer(context: PageContext, jsonUrl: string, requestHeaders: HandlerHeaders): Promise<ApiReferenceAnswer> {
    if (context.user !== undefined) return { status: 200, headers: {}, body: apiReferenceLayout(context, await this.body(jsonUrl)) };
    if (this.published?.jsonUrl !== jsonUrl) {
      const published = { jsonUrl, page: this.body(jsonUrl).then((body) => publishDocument(apiReferenceLayout(context, body))) };
      this.published = published;
      published.page.catch(() => {
        if (this.published === published) this.published = undefined;
      });
    }
    const page = await this.published!.page;
    const coding = negotiateCoding(headerOf(requestHeaders, 'accept-encoding'));
    const pending = page.representation(coding);
    const representation = pending instanceof Promise ? await pending : pending;
    const headers: Record<string, string> = { etag: representation.etag, 'cache-control': 'no-cache', vary: API_REFERENCE_VARY };
    if (matchesETag(headerOf(requestHeaders, 'if-none-match'), representation.etag)) return { status: 304, headers, body: '' };
    if (coding !== 'identity') headers['content-encoding'] = coding;
    headers['content-length'] = String(representation.body.byteLength);
    return { status: 200, headers, body: representation.body };
  }
}
