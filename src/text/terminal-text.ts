/**
 * Text as a terminal can show it. A label read from a data file or a codebook may hold control
 * characters (ESC opening a colour or cursor sequence, a carriage return, a bell, a line
 * break) that a terminal would act on instead of showing, and whose width is 0, so a table's
 * columns slip. Plain-text output shows each C0 control as its Unicode control picture (ESC as
 * ␛, a line break as ␊, a tab as ␉), DEL as ␡ and a C1 control (U+0080 to U+009F) as U+FFFD;
 * JSON, CSV and the other formats keep the text as it is.
 */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

const pictureOf = (control: string): string => {
  const code = control.charCodeAt(0);
  return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? '\u2421' : '\ufffd';
};

/** `text` with its control characters shown as pictures (see above); the same string when it has none. */
export function terminalText(text: string): string {
  return text.replace(CONTROLS, pictureOf);
}
