/**
 * Padding by display width, not string length: a CJK character takes two terminal columns,
 * a combining mark none, an emoji two (string-width measures them).
 */
import stringWidth from 'string-width';

/** Columns `text` takes in a monospaced terminal. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** `text` followed by spaces up to `width` columns. */
export function padEndDisplay(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

/** Spaces, then `text`, filling `width` columns. */
export function padStartDisplay(text: string, width: number): string {
  return ' '.repeat(Math.max(0, width - displayWidth(text))) + text;
}

/** `text` cut to at most `width` columns, ending in "…" when cut. */
export function truncateDisplay(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  let cut = '';
  for (const character of text) {
    if (displayWidth(`${cut}${character}…`) > width) break;
    cut += character;
  }
  return `${cut}…`;
}
