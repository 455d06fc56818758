/**
 * The colours of one chart's series: never the same colour twice in a chart. Dask's states keep
 * the colours the page has always given them (when free in this chart); every other name takes
 * the next unused colour of a twelve-colour qualitative palette, and past those, hues spread by
 * the golden angle at a lightness apart from the palette's, so a chart of any size repeats none.
 */

/** Dask's states, as the dashboard-like colours the page used before. */
export const STATE_COLORS: Readonly<Record<string, string>> = Object.freeze({
  waiting: "#f2a93b",
  fetch: "#c9a0dc",
  flight: "#9b6fc3",
  missing: "#e377c2",
  ready: "#6fa8dc",
  constrained: "#3d85c6",
  executing: "#6aa84f",
  "long-running": "#38761d",
  resumed: "#b6d7a8",
  cancelled: "#999999",
  rescheduled: "#bbbbbb",
  memory: "#76a5af",
  error: "#cc0000",
  queued: "#a4c2f4",
  "no-worker": "#e06666",
  processing: "#93c47d",
  released: "#cccccc",
});

/** Paul Tol's "muted" and "bright" qualitative schemes (colour-blind safe), twelve in all. */
const PALETTE = [
  "#4477aa",
  "#ee6677",
  "#228833",
  "#ccbb44",
  "#66ccee",
  "#aa3377",
  "#332288",
  "#117733",
  "#88ccee",
  "#ddcc77",
  "#cc6677",
  "#882255",
];

function hslHex(hue: number, saturation: number, lightness: number): string {
  const a = saturation * Math.min(lightness, 1 - lightness);
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    const value = lightness - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(255 * value)
      .toString(16)
      .padStart(2, "0");
  };
  return `#${channel(0)}${channel(8)}${channel(4)}`;
}

/** One colour per name, in order, none repeated; `preferred` colours are kept where still free. */
export function chartColors(names: readonly string[], preferred: Readonly<Record<string, string>> = {}): string[] {
  const used = new Set<string>();
  const colors: string[] = [];
  let next = 0;
  let extra = 0;
  for (const name of names) {
    let color = Object.prototype.hasOwnProperty.call(preferred, name) ? preferred[name] : undefined;
    if (color === undefined || used.has(color)) {
      while (next < PALETTE.length && used.has(PALETTE[next])) next++;
      if (next < PALETTE.length) color = PALETTE[next++];
      else {
        do {
          // Golden-angle hues, three lightnesses in turn: distinct for any count a page can show.
          color = hslHex((extra * 137.508) % 360, 0.55, [0.62, 0.45, 0.75][extra % 3]);
          extra++;
        } while (used.has(color));
      }
    }
    used.add(color);
    colors.push(color);
  }
  return colors;
}
