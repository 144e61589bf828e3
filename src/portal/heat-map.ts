/**
 * The column-percentage shades of the Tables page: white for 0 %, the brand's dark blue for
 * 100 %, with the text colour (dark or white) that contrasts more with each shade.
 */

/** The shade's end colours: white for 0 %, the brand's dark blue for 100 %. */
const LOW = [255, 255, 255] as const;
const HIGH = [26, 52, 168] as const;
const INK = [20, 33, 61] as const;

const channel = (value: number): number => {
  const c = value / 255;
  return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};
const luminance = (rgb: readonly number[]): number => 0.2126 * channel(rgb[0]!) + 0.7152 * channel(rgb[1]!) + 0.0722 * channel(rgb[2]!);
const contrast = (a: readonly number[], b: readonly number[]): number => {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
};

/** The background of a column share (0–1) and the text colour that reads best on it. */
export function shade(share: number): { background: string; text: string; contrast: number } {
  const t = Math.min(1, Math.max(0, share));
  const rgb = LOW.map((low, i) => Math.round(low + (HIGH[i]! - low) * t));
  const ink = contrast(rgb, INK);
  const white = contrast(rgb, [255, 255, 255]);
  return { background: `rgb(${rgb.join(',')})`, text: ink >= white ? '#14213d' : '#ffffff', contrast: Math.max(ink, white) };
}

/** The shading classes are few (0, 5, ... 100 %), so the page needs no inline styles (the CSP allows none). */
export const SHADE_STEPS = 20;
export function shadeClass(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return 'heat-none';
  return `heat-${Math.round(Math.min(1, Math.max(0, share)) * SHADE_STEPS)}`;
}

/** The stylesheet rules of the shading classes. */
export function shadeCss(): string {
  let css = '.heat-none { background:#f5f7fb; color:#14213d; }\n';
  for (let step = 0; step <= SHADE_STEPS; step++) {
    const { background, text } = shade(step / SHADE_STEPS);
    css += `.heat-${step} { background:${background}; color:${text}; }\n`;
  }
  return css;
}
