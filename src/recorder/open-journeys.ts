import { stateCell } from "./accumulators.js";
import type { Recorder } from "./recorder.js";

/** How many (prefix, state) cells the shutdown line names; the rest are summed. */
export const OPEN_CELLS_NAMED = 3;
/** Characters of the oldest journey's key the line shows at most (a key may be long). */
const KEY_SHOWN = 80;

/**
 * The one line told at shutdown when journeys are still live: how many, in which (prefix, state)
 * cells (the fullest few), and the oldest's key, state and age. Built from the per-cell counts the
 * metric producer reads (`task.active`) and the head of the live list, so its cost is the number of
 * cells, not of journeys. Undefined when no journey is live.
 */
export function openJourneysLine(recorder: Recorder): string | undefined {
  const open = recorder.live.size;
  const oldest = recorder.oldestLiveJourney();
  if (open === 0 || oldest === undefined) return undefined;
  const { accumulators, prefixes, machine } = recorder;
  const cells: { prefix: string; state: string; count: number }[] = [];
  const prefixCount = prefixes.names.length + (prefixes.overflowed > 0 ? 1 : 0);
  for (let p = 0; p < prefixCount; p++) {
    const prefixId = p < prefixes.names.length ? p : prefixes.limit;
    for (let state = 0; state < machine.names.length; state++) {
      if (machine.terminal[state] === 1) continue;
      const count = accumulators.active(stateCell(prefixId, state));
      if (count > 0) cells.push({ prefix: prefixes.name(prefixId), state: machine.names[state], count });
    }
  }
  // Fullest first; ties in the order of the declared states, then of the prefixes' first use.
  const ranked = cells
    .map((cell, index) => ({ cell, index }))
    .sort((a, b) => b.cell.count - a.cell.count || a.index - b.index);
  const named = ranked.slice(0, OPEN_CELLS_NAMED).map(({ cell }) => `${cell.count} ${cell.prefix} in ${cell.state}`);
  const rest = ranked.slice(OPEN_CELLS_NAMED).reduce((sum, { cell }) => sum + cell.count, 0);
  const others = ranked.length - OPEN_CELLS_NAMED;
  if (rest > 0) named.push(`${rest} more in ${others} other (prefix, state) ${others === 1 ? "pair" : "pairs"}`);
  const age = Math.max(0, recorder.clock() - oldest.start);
  const key = String(oldest.id);
  const shownKey = key.length > KEY_SHOWN ? `${key.slice(0, KEY_SHOWN)}…` : key;
  const ends = machine.terminalNames.join(", ");
  return (
    `taskjourney: ${open} ${open === 1 ? "journey" : "journeys"} still open at shutdown (never reached a terminal state): ` +
    `${named.join(", ")}; the oldest, ${JSON.stringify(shownKey)} (now in ${machine.names[oldest.state]}), began ${seconds(age)} before. ` +
    `A journey ends when its key reaches a terminal state (${ends}); a key whose outcome this process never learns ` +
    "(a producer's job) should be moved to one when it is handed off."
  );
}

/** Seconds as a short text: 0.005 s, 5.1 s, 2.0 min, 1.5 h. */
function seconds(value: number): string {
  if (value >= 3600) return `${(value / 3600).toFixed(1)} h`;
  if (value >= 120) return `${(value / 60).toFixed(1)} min`;
  if (value >= 1) return `${value.toFixed(1)} s`;
  return `${Number(value.toPrecision(2))} s`;
}
