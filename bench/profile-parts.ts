/**
 * Splits a V8 CPU profile (the inspector's Profiler domain, `node --cpu-prof`) into who spent the
 * time: taskjourney's own code, the OpenTelemetry SDK, the example's thread CPU clock (WebAssembly
 * calling WASI), the host (the example cluster and the replay), other packages, Node.js's own
 * JavaScript where no one of those called it, and V8's garbage collector, idle and "program".
 *
 * Time in a native function (url "": `performance.now`, `open`, `Map.prototype.set` when sampled
 * as a frame) or in Node.js's JavaScript (`node:` urls: timers, zlib, streams) is its nearest
 * caller's: `performance.now()` called by the recorder is taskjourney's cost, zlib called by the
 * worker the host's. So a part is what its code cost, with what it asked of the runtime.
 *
 * Why a profile and not callgrind: a worker's telemetry is spread over ~40 functions of a few µs
 * a task each, and callgrind's counts for unchanged code vary by more than the whole goal from run
 * to run (the event loop turns with the wall clock). Sampling every 100 µs over ~10,000 tasks puts
 * a part's figure within a few µs a task; what it cannot show is the cost telemetry's cache misses
 * add to the host, which is in the host's part and in the process's CPU.
 */

export const PROFILE_PARTS = [
  "taskjourney",
  "OpenTelemetry SDK",
  "thread CPU clock (WASI)",
  "host (example, replay)",
  "other packages",
  "Node.js, uncalled",
  "garbage collector",
  "program and idle",
] as const;
export type ProfilePart = (typeof PROFILE_PARTS)[number];

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** What the inspector's Profiler.stop returns (and a .cpuprofile file holds). */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSplit {
  /** µs per task, by part. */
  perTask: Record<ProfilePart, number>;
  /** taskjourney's functions ("name file:line"), µs per task of self time with the natives they called. */
  functions: Record<string, number>;
}

/** The part a frame's own code belongs to, or undefined for a frame whose time is its caller's. */
function ownerOf(frame: ProfileNode["callFrame"]): ProfilePart | undefined {
  const { url, functionName } = frame;
  if (url === "") {
    if (functionName === "(garbage collector)") return "garbage collector";
    if (functionName === "(program)" || functionName === "(idle)") return "program and idle";
    if (functionName.startsWith("wasm-to-js") || functionName.startsWith("js-to-wasm"))
      return "thread CPU clock (WASI)";
    return undefined;
  }
  if (url.startsWith("wasm://")) return "thread CPU clock (WASI)";
  if (url.startsWith("node:")) return undefined;
  if (url.includes("/@opentelemetry/")) return "OpenTelemetry SDK";
  if (url.includes("/node_modules/")) return "other packages";
  if (/\/(dist|src)\//.test(url) && !/\/(examples|bench)\//.test(url)) return "taskjourney";
  return "host (example, replay)";
}

/** "name path:line", the path from dist/ or src/ on. */
function functionName(frame: ProfileNode["callFrame"]): string {
  const under = /\/((?:dist|src)\/.*)$/.exec(frame.url);
  return `${frame.functionName || "(anonymous)"} ${under !== null ? under[1] : frame.url}:${frame.lineNumber + 1}`;
}

/**
 * Splits the samples of `profile` taken at or after `from` (µs, the profile's clock) over `tasks`.
 * A sample's time is the delta to the next sample (the last one's is unknown and left out).
 */
export function splitProfile(profile: CpuProfile, tasks: number, from = profile.startTime): ProfileSplit {
  const byId = new Map<number, ProfileNode>(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // Each node's part, and the taskjourney function its time goes to, resolved once per node.
  const partOf = new Map<number, ProfilePart>();
  const functionOf = new Map<number, string | undefined>();
  const resolve = (id: number): void => {
    let at: number | undefined = id;
    while (at !== undefined) {
      const owner = ownerOf(byId.get(at)!.callFrame);
      if (owner !== undefined) {
        partOf.set(id, owner);
        functionOf.set(id, owner === "taskjourney" ? functionName(byId.get(at)!.callFrame) : undefined);
        return;
      }
      at = parent.get(at);
    }
    // Up to the root with no owner: Node.js's own JavaScript, run by the event loop (a sample on
    // the root itself is V8's, as "(program)" is).
    partOf.set(id, byId.get(id)!.callFrame.functionName === "(root)" ? "program and idle" : "Node.js, uncalled");
    functionOf.set(id, undefined);
  };
  const perTask = Object.fromEntries(PROFILE_PARTS.map((part) => [part, 0])) as Record<ProfilePart, number>;
  const functions: Record<string, number> = {};
  let time = profile.startTime;
  for (let index = 0; index < profile.samples.length - 1; index++) {
    time += profile.timeDeltas[index];
    if (time < from) continue;
    const spent = profile.timeDeltas[index + 1] / tasks;
    const id = profile.samples[index];
    if (!partOf.has(id)) resolve(id);
    perTask[partOf.get(id)!] += spent;
    const name = functionOf.get(id);
    if (name !== undefined) functions[name] = (functions[name] ?? 0) + spent;
  }
  return { perTask, functions };
}
