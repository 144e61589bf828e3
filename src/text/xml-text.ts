/**
 * Text for an XML document (the SVG chart, the PowerPoint deck): XML 1.0 cannot hold the
 * control characters other than tab, line feed and carriage return, nor U+FFFE, U+FFFF or a
 * lone surrogate, not even as character references, and a document with one is not XML
 * (PowerPoint refuses the deck, a browser the SVG). They are left out, as the XLSX writer
 * (exceljs) leaves them out of the workbook; the CSV, JSON and text outputs keep them.
 */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const EVERY_NOT_XML = new RegExp(NOT_XML.source, 'gu');

/** `text` without the characters an XML document cannot hold. */
export function xmlText(text: string): string {
  return NOT_XML.test(text) ? text.replace(EVERY_NOT_XML, '') : text;
}

/** `text` as the content of an XML element or attribute: xmlText, then &, <, > and " as entities. */
export function xmlEscaped(text: string): string {
  return xmlText(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * OOXML's character escape: in an ST_Xstring (a workbook cell's or shared string's text, a
 * chart's cached series name or category label) _xHHHH_ stands for the character U+HHHH, so
 * Excel and PowerPoint show a label '_x0041_' as 'A'. Such text is written with the lead
 * underscore of each escape escaped itself, _x005F_, and reads back as written. DrawingML's
 * own text (a slide's a:t) is no ST_Xstring and is written as it is.
 */
const ESCAPE_LIKE = /_x[0-9A-Fa-f]{4}_/;
/** Every underscore that opens an _xHHHH_ (a lookahead: in _x0041_x0042_ the second opens one too). */
const ESCAPE_LEAD = /_(?=x[0-9A-Fa-f]{4}_)/g;

/** Whether `text` holds _xHHHH_, which a reader of an ST_Xstring would change. */
export function hasXstringEscape(text: string): boolean {
  return ESCAPE_LIKE.test(text);
}

/** `text` as an ST_Xstring that reads back as `text`: the lead underscore of each _xHHHH_ as _x005F_. */
export function xstringText(text: string): string {
  return ESCAPE_LIKE.test(text) ? text.replace(ESCAPE_LEAD, '_x005F_') : text;
}
