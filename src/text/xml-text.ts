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
