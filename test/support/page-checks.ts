// Checks of a rendered page shared by the portal's browser tests: colour contrast and horizontal overflow.

/** WCAG relative luminance contrast of two CSS rgb()/rgba() colours (alpha taken as opaque). */
export function contrast(a: string, b: string): number {
  const luminance = (color: string): number => {
    const [r, g, bl] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((part) => {
      const c = Number(part) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** Page-side: '' when nothing overflows the page horizontally, else the elements that stick out. */
export const OVERFLOW = `(() => {
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth <= width) return '';
  return [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > width + 0.5 && !e.closest('.table-wrap *')).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 8).join('; ') || 'scrollWidth ' + document.documentElement.scrollWidth + ' > ' + width;
})()`;
