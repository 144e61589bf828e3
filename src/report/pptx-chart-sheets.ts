import { CrosstabError, ErrorCode } from '../errors.js';
import { xmlEscaped, xstringText } from '../text/xml-text.js';

/** The texts of one chart's data sheet: its series names (row 1 from B) and category labels (column A from row 2). */
export interface ChartSheetTexts {
  names: readonly string[];
  labels: readonly string[];
}

/**
 * A deck whose charts' embedded workbooks hold the series names and category labels the
 * charts show. pptxgenjs writes each workbook's shared strings itself, and there turns
 * "X-Axis" in a series name into "X-Values", leaves out an empty category label (every label
 * after it then moves up a row, and the last one points past the list) and drops the
 * xml:space="preserve" that keeps a label's leading and trailing spaces. Its sheet's cells
 * point at the strings in a fixed order ('' for A1, the series names, then the labels), so the
 * strings are written again in that order, each as an ST_Xstring that reads back as the text
 * (the lead underscore of an _xHHHH_ escaped as _x005F_: LibreOffice Calc reads such a plain
 * shared string back as written, as Excel does). `charts` are in slide order, one chart a slide.
 */
export async function rewriteChartSheets(deck: Uint8Array, charts: readonly ChartSheetTexts[]): Promise<Uint8Array> {
  const { default: JSZip } = await import('jszip');
  const zip = await JSZip.loadAsync(deck);
  for (const [index, chart] of charts.entries()) {
    const chartPart = target(await read(zip, `ppt/slides/_rels/slide${index + 1}.xml.rels`), 'charts');
    const workbookPart = target(await read(zip, `ppt/charts/_rels/${chartPart}.rels`), 'embeddings');
    const workbook = await JSZip.loadAsync(await zip.file(`ppt/embeddings/${workbookPart}`)!.async('uint8array'));
    workbook.file('xl/sharedStrings.xml', sharedStrings(['', ...chart.names, ...chart.labels]));
    zip.file(`ppt/embeddings/${workbookPart}`, await workbook.generateAsync({ type: 'uint8array', compression: 'DEFLATE' }));
  }
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

async function read(zip: import('jszip'), path: string): Promise<string> {
  const file = zip.file(path);
  if (file === null) throw new CrosstabError(ErrorCode.internal, `the deck pptxgenjs wrote has no ${path}`);
  return file.async('string');
}

/** The file name a relationship of `folder` points at (`../charts/chart3.xml` or `/ppt/charts/chart3.xml`). */
function target(rels: string, folder: string): string {
  const found = new RegExp(`Target="(?:\\.\\.|/ppt)/${folder}/([^"/]+)"`).exec(rels);
  if (found === null) throw new CrosstabError(ErrorCode.internal, `the deck pptxgenjs wrote has a slide or chart without its ${folder} part`);
  return found[1]!;
}

function sharedStrings(texts: readonly string[]): string {
  const items = texts.map((text) => `<si><t xml:space="preserve">${xmlEscaped(xstringText(text))}</t></si>`).join('');
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${texts.length}" uniqueCount="${texts.length}">${items}</sst>\n`;
}
