/** Content negotiation by the Accept header, for operations that answer in more than one format. */

/** The media type of an Excel workbook (POST /tables writes one with tableToXLSX). */
export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** The media type of a PowerPoint deck (POST /tables writes one with tablesToPPTX). */
export const PPTX_TYPE = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';

export type ResponseFormat = 'json' | 'csv' | 'xlsx' | 'pptx';

const FORMAT_OF: Record<string, ResponseFormat> = {
  'application/json': 'json',
  'text/csv': 'csv',
  [XLSX_TYPE]: 'xlsx',
  [PPTX_TYPE]: 'pptx',
  'application/*': 'json',
  'text/*': 'csv',
  '*/*': 'json',
};

/**
 * The format `accept` prefers (highest q; on a tie the first listed), JSON when the header is
 * absent or empty, or undefined when it accepts none of them (406).
 */
export function negotiateFormat(accept: string | undefined): ResponseFormat | undefined {
  if (accept === undefined || accept.trim() === '') return 'json';
  let best: { format: ResponseFormat; q: number } | undefined;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const format = FORMAT_OF[type ?? ''];
    if (format === undefined) continue;
    const qParam = params.find((param) => param.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q > 0) || q > 1) continue;
    if (best === undefined || q > best.q) best = { format, q };
  }
  return best?.format;
}
