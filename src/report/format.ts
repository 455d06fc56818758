import type { Breakdown, BreakdownNode } from "../model/breakdown.js";
import { ALL_STATES } from "../model/states.js";
import { guarded } from "./arguments.js";
import { treeActivityName } from "./lumps.js";
import { terminalSafe } from "./terminal.js";

/** Seconds as the tree shows them: ms below one second, s above, one decimal. */
export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return "-";
  if (seconds === 0) return "0 s";
  if (seconds < 0.001) return `${(seconds * 1e6).toFixed(1)} µs`;
  if (seconds < 1) return `${(seconds * 1000).toFixed(1)} ms`;
  return `${seconds.toFixed(1)} s`;
}

/** Bytes as the tree shows them: B, KiB, MiB, GiB, one decimal above bytes. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "-";
  const units = ["KiB", "MiB", "GiB", "TiB"];
  if (Math.abs(bytes) < 1024) return `${bytes} B`;
  let value = bytes;
  let unit = -1;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A node's digested quantities, e.g. "64.0 KiB, 2 count"; "" without any. */
function formatQuantities(quantities: Readonly<Record<string, number>> | undefined): string {
  if (quantities === undefined) return "";
  return Object.entries(quantities)
    .map(([unit, value]) => (unit === "bytes" ? formatBytes(value) : `${value} ${terminalSafe(unit)}`))
    .join(", ");
}

/**
 * Dask's terminal states that are not a success, for a breakdown that does not say (`failed`
 * absent: one made by an earlier version, or by hand). The tree's first line says so.
 */
const FAILED_OUTCOMES = new Set(["error", "erred", "cancelled"]);

/**
 * The computation a journey belongs to, with its totals when known: "computation graph-7: 120
 * tasks (2 failed), 14.0 s wall; task-seconds waiting 3.0 s, processing 5.0 s".
 */
function computationLine(breakdown: Breakdown): string {
  const head = `computation ${terminalSafe(breakdown.computation!)}`;
  const totals = breakdown.computationTotals;
  if (totals === undefined) return head;
  const notes = [totals.live > 0 ? `${totals.live} live` : "", totals.failed > 0 ? `${totals.failed} failed` : ""]
    .filter((note) => note !== "")
    .join(", ");
  const wall = totals.live > 0 ? `${formatSeconds(totals.wall)} so far` : `${formatSeconds(totals.wall)} wall`;
  const seconds = Object.entries(totals.seconds)
    .map(([state, value]) => `${terminalSafe(state)} ${formatSeconds(value)}`)
    .join(", ");
  return `${head}: ${totals.tasks} tasks${notes === "" ? "" : ` (${notes})`}, ${wall}${seconds === "" ? "" : `; task-seconds ${seconds}`}`;
}

const DASK_STATES: ReadonlySet<string> = new Set(ALL_STATES);

/**
 * Whether a breakdown is of a machine of the user's own: a state it visited or ended in that Dask
 * does not have. Such a journey is told without Dask's role names ("on worker", "on scheduler")
 * and journey kinds (compute, fetch), as the report tells its data (words.ts isCustomMachine).
 */
export function isCustomBreakdown(breakdown: Breakdown): boolean {
  if (breakdown.outcome !== undefined && !DASK_STATES.has(breakdown.outcome)) return true;
  return breakdown.children.some((node) => !DASK_STATES.has(node.name));
}

/**
 * The label over each of a key's journeys when several are printed: Dask's kind ("[compute
 * journey]", "[fetch journey]"), or on a machine of the user's own, which has no such kinds, its
 * place among them ("[journey 2 of 3]").
 */
export function journeyLabel(breakdown: Breakdown, index: number, count: number): string {
  return isCustomBreakdown(breakdown) ? `[journey ${index + 1} of ${count}]` : `[${breakdown.kind} journey]`;
}

/** Waiting time not spent by a transfer (dependencies computing, queueing, missing) is not "gather: …". */
function isGatherActivity(name: string): boolean {
  return name !== "dependencies" && name !== "missing" && !name.startsWith("queued");
}

/**
 * The text tree of a breakdown, as at the top of the README. Names come out terminal-safe
 * (control characters as visible escapes: a key from a trace file can hold anything):
 *
 *     inc-7f3a spent 10.0 s on worker tcp://10.0.0.7:40001
 *     ├─ waiting      8.0 s
 *     │  ├─ gather: network  2.0 s
 *
 * `roles`: whether the first line names the role ("on worker …"); by default Dask's journeys do
 * and a machine of the user's own (a state Dask does not have) does not: "mail-2 spent 1.0 s on engine-1".
 */
export function formatBreakdown(breakdown: Breakdown, options: { roles?: boolean } = {}): string {
  return guarded(
    "formatBreakdown(breakdown, options)",
    [
      ["breakdown", "a Breakdown, as explain() gives", breakdown],
      ["options", "{ roles?: boolean }", options],
    ],
    () => {
      // A machine of the user's own has no "worker" or "scheduler" of Dask's: its role is left out
      // unless asked for (roles: true).
      const roles = options.roles ?? !isCustomBreakdown(breakdown);
      const role = !roles ? "" : breakdown.kind === "scheduler" ? "scheduler " : "worker ";
      const where = breakdown.instance === "" ? "" : ` on ${role}${terminalSafe(breakdown.instance)}`;
      const ending =
        breakdown.outcome === undefined
          ? " (not ended)"
          : (breakdown.failed ?? FAILED_OUTCOMES.has(breakdown.outcome))
            ? ` (ended in ${terminalSafe(breakdown.outcome)})`
            : "";
      const lines = [`${terminalSafe(breakdown.key)} spent ${formatSeconds(breakdown.seconds)}${where}${ending}`];
      if (typeof breakdown.computation === "string") lines.push(computationLine(breakdown));
      const rows: Array<{ prefix: string; label: string; seconds: number; quantities: string; attempt: string }> = [];
      // parentState: the state node the nodes are the activities of ("" deeper down); waits: whether it
      // is the state where the task waited for its dependencies (its activities are its fetches'). A
      // breakdown that does not say (made by hand) goes by Dask's name.
      const waitingState = breakdown.waitingState ?? (breakdown.kind === "compute" ? "waiting" : "");
      const waitsIn = (node: BreakdownNode): boolean => waitingState !== "" && node.name === waitingState;
      const walk = (
        nodes: BreakdownNode[],
        indent: string,
        parentState: string | undefined,
        waits = false,
        parent?: BreakdownNode,
      ) => {
        nodes.forEach((node, index) => {
          const last = index === nodes.length - 1;
          // A lump, "failed (lump)", is not the state a machine may call failed.
          const name = terminalSafe(treeActivityName(node, parent));
          const label = waits && isGatherActivity(node.name) ? `gather: ${name}` : name;
          // An attempt that did not succeed says how, and why when known, after its time (a long message
          // must not widen the columns): "executing  1.0 s  error: TypeError: no such file".
          const attempt =
            node.outcome === undefined
              ? ""
              : terminalSafe(`${node.outcome}${node.error === undefined ? "" : `: ${node.error}`}`);
          rows.push({
            prefix: `${indent}${last ? "└─ " : "├─ "}`,
            label,
            seconds: node.seconds,
            quantities: formatQuantities(node.quantities),
            attempt,
          });
          walk(
            node.children,
            `${indent}${last ? "   " : "│  "}`,
            parentState === undefined ? node.name : "",
            parentState === undefined && waitsIn(node),
            node,
          );
        });
      };
      walk(breakdown.children, "", undefined);
      // The get_data requests of peers this worker served the key to, after its own journey.
      const servedFrom = rows.length;
      if (breakdown.served !== undefined && breakdown.served.length > 0) walk(breakdown.served, "", "");
      const width = Math.max(0, ...rows.map((row) => row.prefix.length + row.label.length));
      for (const [index, row] of rows.entries()) {
        if (index === servedFrom) lines.push("served to peers");
        const quantities = row.quantities === "" ? "" : `  ${row.quantities}`;
        const attempt = row.attempt === "" ? "" : `  ${row.attempt}`;
        lines.push(
          `${row.prefix}${row.label}${" ".repeat(width - row.prefix.length - row.label.length + 2)}${formatSeconds(row.seconds).padStart(8)}${quantities}${attempt}`,
        );
      }
      return lines.join("\n");
    },
  );
}
