import { SpanKind, SpanStatusCode, type Tracer, type TracerProvider } from "@opentelemetry/api";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace";
import { TaskJourneys, type TaskJourneysOptions } from "../../../src/index.js";
import type { DeprecatedFlatOptions } from "../../../src/types.js";
import { keyHashUnit } from "../../../src/model/sampling.js";
import { FakeClock } from "../../helpers/clock.js";

/** Epoch seconds at which the fake clocks read 0. */
export const ORIGIN = 1_700_000_000;
export const WORKER = "tcp://10.0.0.7:40001";

/** Counts every span a tracer of it starts: the proof that unsampled journeys make none. */
export class CountingTracerProvider implements TracerProvider {
  starts = 0;
  tracers = 0;
  constructor(readonly inner: TracerProvider) {}
  getTracer(name: string, version?: string, options?: { schemaUrl?: string }): Tracer {
    this.tracers++;
    const tracer = this.inner.getTracer(name, version, options);
    const startSpan: Tracer["startSpan"] = (spanName, spanOptions, context) => {
      this.starts++;
      return tracer.startSpan(spanName, spanOptions, context);
    };
    return { startSpan, startActiveSpan: tracer.startActiveSpan.bind(tracer) } as Tracer;
  }
}

export interface Harness {
  clock: FakeClock;
  exporter: InMemorySpanExporter;
  provider: BasicTracerProvider;
  counting: CountingTracerProvider;
  journeys: TaskJourneys;
}

export function harness(
  options: TaskJourneysOptions & DeprecatedFlatOptions = {},
  exporter = new InMemorySpanExporter(),
  clock = new FakeClock(100),
): Harness {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: exporter })] });
  const counting = new CountingTracerProvider(provider);
  // A clock or time origin given flat (as older tests do) goes where the grouped form has it, so
  // that the harness itself tells no deprecation: tests that count stderr lines see only theirs.
  const { clock: flatClock, timeOrigin: flatOrigin, ...rest } = options;
  const journeys = new TaskJourneys({
    role: "worker",
    instance: WORKER,
    tracerProvider: counting,
    ...rest,
    runtime: {
      clock: flatClock ?? clock.now,
      timeOrigin: "timeOrigin" in options ? flatOrigin : ORIGIN,
      ...options.runtime,
    },
    sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true, ...options.sampling },
  });
  return { clock, exporter, provider, counting, journeys };
}

/** The first key `<prefix>-<n>` whose head-sampling decision at `ratio` is `sampled`. */
export function keyWith(prefix: string, ratio: number, sampled: boolean, skip = 0): string {
  for (let n = 0, found = 0; ; n++) {
    const key = `${prefix}-${n}`;
    if (keyHashUnit(key) < ratio === sampled && found++ === skip) return key;
  }
}

/** Seconds since ORIGIN of an HrTime. */
export function seconds(time: readonly [number, number]): number {
  return time[0] - ORIGIN + time[1] / 1e9;
}

export function label(span: ReadableSpan): string {
  if (span.name.startsWith("task "))
    return `${span.name} [${String(span.attributes["task.key"])}@${String(span.attributes["task.role"])}]`;
  if (span.name === "gather_dep")
    return `gather_dep [${String(span.attributes["transfer.peer"])} ${String(span.attributes["transfer.outcome"])}]`;
  return span.name;
}

/**
 * The span forest as indented lines: label, kind (when not INTERNAL), start-end in seconds since
 * ORIGIN, ERROR status, and links by the label of the span linked (or "external <id>").
 */
export function render(spans: readonly ReadableSpan[]): string[] {
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
  const children = new Map<string, ReadableSpan[]>();
  const roots: ReadableSpan[] = [];
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    if (parent !== undefined && byId.has(parent)) {
      const list = children.get(parent) ?? [];
      list.push(span);
      children.set(parent, list);
    } else {
      roots.push(span);
    }
  }
  const order = (a: ReadableSpan, b: ReadableSpan) =>
    seconds(a.startTime) - seconds(b.startTime) ||
    seconds(a.endTime) - seconds(b.endTime) ||
    label(a).localeCompare(label(b));
  const lines: string[] = [];
  const walk = (span: ReadableSpan, depth: number) => {
    let line = `${"  ".repeat(depth)}${label(span)}`;
    if (span.kind !== SpanKind.INTERNAL) line += ` ${SpanKind[span.kind]}`;
    line += ` ${seconds(span.startTime)}-${seconds(span.endTime)}`;
    if (span.status.code === SpanStatusCode.ERROR) line += " ERROR";
    if (span.links.length > 0) {
      const names = span.links.map((link) => {
        const target = byId.get(link.context.spanId);
        return target === undefined ? `external ${link.context.spanId}` : label(target);
      });
      line += ` → ${names.join(", ")}`;
    }
    lines.push(line);
    for (const child of (children.get(span.spanContext().spanId) ?? []).sort(order)) walk(child, depth + 1);
  };
  for (const root of roots.sort(order)) walk(root, 0);
  return lines;
}

export function find(spans: readonly ReadableSpan[], predicate: (span: ReadableSpan) => boolean): ReadableSpan {
  const found = spans.filter(predicate);
  if (found.length !== 1) throw new Error(`expected one span, found ${found.length}: ${found.map(label).join(", ")}`);
  return found[0];
}

export const taskSpan =
  (key: string, role = "worker") =>
  (span: ReadableSpan) =>
    span.name.startsWith("task ") && span.attributes["task.key"] === key && span.attributes["task.role"] === role;

/** The span of `name` whose parent is `parent`. */
export function childOf(spans: readonly ReadableSpan[], parent: ReadableSpan, name: string): ReadableSpan {
  return find(spans, (span) => span.name === name && span.parentSpanContext?.spanId === parent.spanContext().spanId);
}
