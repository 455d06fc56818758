import { failureText } from "../model/breakdown.js";
import type { JourneyKind } from "../model/breakdown-builder.js";
import { ALL_STATES } from "../model/states.js";
import {
  ATTR_DIGEST,
  ATTR_TASK_KEY,
  ATTR_TASK_ERROR,
  ATTR_TASK_ROLE,
  ATTR_TASK_WAIT_PREFIX,
  ATTR_TASK_WORKER,
  ATTR_THREAD_CPU_TIME,
  ATTR_THREAD_NONCPU_TIME,
  RESOURCE_INSTANCE,
  SPAN_GATHER_DEP,
  SPAN_RUN,
  SPAN_TASK_PREFIX,
} from "../shared/semconv.js";
import { guarded } from "./arguments.js";
import { OtlpJsonError, type DecodedSpan } from "./otlp-json.js";
import { terminalSafe } from "./terminal.js";

/**
 * Exported spans indexed once (SpanIndex: by trace and parent, in start order, refusing what no
 * exporter writes) and the span readers that rebuilding breakdowns (from-trace.ts) and the report
 * (from-telemetry.ts) share: attributes, state visits, a journey's kind and instance, which spans
 * are task spans and the bridge's run-of-digests spans. from-trace.ts re-exports what it exported
 * before, so its importers are unchanged.
 */

export const STATES: ReadonlySet<string> = new Set(ALL_STATES);
/**
 * The deepest nesting of spans read: a journey's spans are a few levels deep (task, state,
 * activities as the user nests them, gather_dep under a flight); far deeper is a crafted file,
 * and reading it recursively would overflow the stack.
 */
export const MAX_SPAN_DEPTH = 1000;
export const FETCH_STATES: ReadonlySet<string> = new Set(["fetch", "flight", "missing"]);

/** The spans of one trace file, indexed once for any number of look-ups. */
export class SpanIndex {
  readonly spans: readonly DecodedSpan[];
  /** Task spans (`task <prefix>` with `task.key`), in start order. */
  readonly tasks: DecodedSpan[] = [];
  private readonly children = new Map<string, DecodedSpan[]>();
  private readonly byId = new Map<string, DecodedSpan>();
  private readonly order = new Map<DecodedSpan, number>();
  /** gather_dep spans by start time, for flight visits that lost their link. */
  private readonly gathersByStart = new Map<bigint, DecodedSpan[]>();
  /** A gather_dep's activities flattened once, however many keys it carried (see flightActivities). */
  readonly flattened = new Map<DecodedSpan, { entries: Array<[string, number]>; topLevel: number }>();

  /**
   * Indexes `spans` in time linear in their number. Throws an OtlpJsonError for spans no
   * exporter writes, which would otherwise make reading them exponential or endless: two spans
   * with one span id in one trace, a span that is its own ancestor (or its own parent), or
   * spans nested deeper than MAX_SPAN_DEPTH.
   */
  constructor(spans: readonly DecodedSpan[]) {
    this.spans = spans;
    guarded(
      "new SpanIndex(spans)",
      [["spans", "an array of decoded spans (decodeOtlpJson(), readTelemetryFiles())", spans]],
      () => {
        spans.forEach((span, index) => {
          const id = idOf(span.traceId, span.spanId);
          const twin = this.byId.get(id);
          if (twin !== undefined) {
            throw new OtlpJsonError(
              `span id ${terminalSafe(span.spanId)} appears twice in trace ${terminalSafe(span.traceId)} (spans "${terminalSafe(twin.name)}" and "${terminalSafe(span.name)}"): ` +
                "the same file given twice, or spans no OpenTelemetry exporter writes",
            );
          }
          this.order.set(span, index);
          this.byId.set(id, span);
          if (span.parentSpanId !== undefined) {
            const key = idOf(span.traceId, span.parentSpanId);
            let list = this.children.get(key);
            if (list === undefined) {
              list = [];
              this.children.set(key, list);
            }
            list.push(span);
          }
          if (isTaskSpan(span)) this.tasks.push(span);
          if (span.name === SPAN_GATHER_DEP) {
            const start = span.startNanos;
            let list = this.gathersByStart.get(start);
            if (list === undefined) this.gathersByStart.set(start, (list = []));
            list.push(span);
          }
        });
        this.checkAncestry();
        this.tasks.sort((a, b) => compareBigint(a.startNanos, b.startNanos));
      },
    );
  }

  /**
   * Every span's depth, each computed once by walking up to the first ancestor whose depth is
   * known (no recursion, so no stack to overflow): a walk that meets a span of its own path is
   * a cycle. Spans are numbered by position and depths kept in a typed array (0 unknown, -1 on
   * the path being walked), so this costs a few array reads per span.
   */
  private checkAncestry(): void {
    const count = this.spans.length;
    const parent = new Int32Array(count).fill(-1);
    this.spans.forEach((span, index) => {
      if (span.parentSpanId === undefined) return;
      const found = this.byId.get(idOf(span.traceId, span.parentSpanId));
      if (found !== undefined) parent[index] = this.order.get(found)!;
    });
    const depth = new Int32Array(count);
    const path: number[] = [];
    for (let start = 0; start < count; start++) {
      let current = start;
      let base = 0;
      while (current !== -1) {
        const known = depth[current];
        if (known > 0) {
          base = known;
          break;
        }
        if (known === -1) {
          const span = this.spans[current];
          throw new OtlpJsonError(
            span.parentSpanId === span.spanId
              ? `span ${terminalSafe(span.spanId)} ("${terminalSafe(span.name)}") of trace ${terminalSafe(span.traceId)} is its own parent`
              : `spans of trace ${terminalSafe(span.traceId)} form a cycle: span ${terminalSafe(span.spanId)} ("${terminalSafe(span.name)}") is its own ancestor`,
          );
        }
        depth[current] = -1;
        path.push(current);
        current = parent[current];
      }
      for (let index = path.length - 1; index >= 0; index--) {
        base += 1;
        if (base > MAX_SPAN_DEPTH) {
          const span = this.spans[path[index]];
          throw new OtlpJsonError(
            `span ${terminalSafe(span.spanId)} of trace ${terminalSafe(span.traceId)} is nested more than ${MAX_SPAN_DEPTH} levels deep; taskjourney's spans never are`,
          );
        }
        depth[path[index]] = base;
      }
      path.length = 0;
    }
  }

  /** Children of `span`, in the order the file has them. */
  childrenOf(span: DecodedSpan): readonly DecodedSpan[] {
    return this.children.get(idOf(span.traceId, span.spanId)) ?? [];
  }

  /**
   * Children of a task span in visit order: by start, ties by end (a zero-length visit before
   * the one that starts as it ends), then by position in the file (the bridge ends state spans in
   * visit order, and exporters keep the order spans ended in).
   */
  visitsOf(task: DecodedSpan): DecodedSpan[] {
    return [...this.childrenOf(task)].sort(
      (a, b) =>
        compareBigint(a.startNanos, b.startNanos) ||
        compareBigint(a.endNanos, b.endNanos) ||
        this.position(a) - this.position(b),
    );
  }

  /**
   * Children of a state, activity or gather_dep span in the order the recorder recorded them
   * (explain()'s order): a metered activity was recorded when it began, a digest (a measurement
   * made elsewhere, its interval inferred: the `run` span of thread digests, or a span marked
   * `taskjourney.digest`) when it ended. Ties: by end, the `run` span first (thread digests are
   * taken first), then last in the file first (the bridge ends sibling activity spans
   * last-recorded first).
   */
  activitiesOf(span: DecodedSpan): DecodedSpan[] {
    const keyed = this.childrenOf(span).map((child) => {
      const run = isRunOfDigests(this, child);
      return { child, run, key: run || child.attributes[ATTR_DIGEST] === true ? child.endNanos : child.startNanos };
    });
    keyed.sort(
      (a, b) =>
        compareBigint(a.key, b.key) ||
        compareBigint(a.child.endNanos, b.child.endNanos) ||
        Number(b.run) - Number(a.run) ||
        this.position(b.child) - this.position(a.child),
    );
    return keyed.map(({ child }) => child);
  }

  private position(span: DecodedSpan): number {
    return this.order.get(span)!;
  }

  /** The gather_dep spans that began at `start`. */
  gathersStartingAt(start: bigint): readonly DecodedSpan[] {
    return this.gathersByStart.get(start) ?? [];
  }

  get(traceId: string, spanId: string): DecodedSpan | undefined {
    return this.byId.get(idOf(traceId, spanId));
  }

  /** Distinct `task.key` values, in first-seen order. */
  keys(): string[] {
    return [...new Set(this.tasks.map((span) => span.attributes[ATTR_TASK_KEY] as string))];
  }
}

export function idOf(traceId: string, spanId: string): string {
  return `${traceId}/${spanId}`;
}

export function compareBigint(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function seconds(span: DecodedSpan): number {
  const nanos = span.endNanos - span.startNanos;
  return nanos > 0n ? Number(nanos) / 1e9 : 0;
}

export function numberAttribute(span: DecodedSpan, name: string): number | undefined {
  const value = span.attributes[name];
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A span's attribute when it is a string, else undefined. */
export function stringAttribute(span: DecodedSpan, name: string): string | undefined {
  const value = span.attributes[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Why a span's attempt failed, as explain() words it ("TypeError: no such file"): its `task.error`,
 * else its `exception` event (a trace written without `task.error`), else undefined.
 */
export function failureReason(span: DecodedSpan): string | undefined {
  const recorded = stringAttribute(span, ATTR_TASK_ERROR);
  if (recorded !== undefined) return recorded;
  return span.exception === undefined ? undefined : failureText(span.exception.type || "Error", span.exception.message);
}

/**
 * Whether `child` of a task span is one of its state spans: of the task's scope and not a task
 * span nested under it (another process's journey). Any name: a scheduler with a state machine of
 * its own names its state spans after its states.
 */
export function isStateSpan(task: DecodedSpan, child: DecodedSpan): boolean {
  return child.scope === task.scope && (STATES.has(child.name) || !child.name.startsWith(SPAN_TASK_PREFIX));
}

/** A task span's state spans (its visits), in the order they were lived. */
export function stateVisitsOf(index: SpanIndex, task: DecodedSpan): DecodedSpan[] {
  return index.visitsOf(task).filter((child) => isStateSpan(task, child));
}

/** Whether a visit carries the apportioned wait of a state that waits for dependencies (`task.wait.*`), whatever its name. */
export function hasWaitAttributes(visit: DecodedSpan): boolean {
  for (const name of Object.keys(visit.attributes)) if (name.startsWith(ATTR_TASK_WAIT_PREFIX)) return true;
  return false;
}

/** What kind of journey a task span is: scheduler by its role, fetch by its first state. */
export function journeyKind(index: SpanIndex, task: DecodedSpan): JourneyKind {
  if (stringAttribute(task, ATTR_TASK_ROLE) === "scheduler") return "scheduler";
  const first = index.visitsOf(task).find((child) => isStateSpan(task, child));
  return first !== undefined && FETCH_STATES.has(first.name) ? "fetch" : "compute";
}

/** The worker or scheduler a task span ran on. */
export function journeyInstance(task: DecodedSpan): string {
  const worker = stringAttribute(task, ATTR_TASK_WORKER);
  if (worker !== undefined) return worker;
  const instance = task.resource[RESOURCE_INSTANCE];
  return typeof instance === "string" ? instance : "";
}

export function isTaskSpan(span: DecodedSpan): boolean {
  return span.name.startsWith(SPAN_TASK_PREFIX) && typeof span.attributes[ATTR_TASK_KEY] === "string";
}

/**
 * Whether a `run` span is the bridge's span of top-level thread digests (no children, lasting at
 * most their sum) rather than an activity the user named "run".
 */
export function isRunOfDigests(index: SpanIndex, span: DecodedSpan): boolean {
  if (span.name !== SPAN_RUN) return false;
  const cpu = numberAttribute(span, ATTR_THREAD_CPU_TIME);
  const noncpu = numberAttribute(span, ATTR_THREAD_NONCPU_TIME);
  if (cpu === undefined && noncpu === undefined) return false;
  if (index.childrenOf(span).length > 0) return false;
  return seconds(span) <= (cpu ?? 0) + (noncpu ?? 0) + 1e-6;
}
