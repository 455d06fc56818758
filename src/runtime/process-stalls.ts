import {
  constants,
  createHistogram,
  performance,
  PerformanceObserver,
  type RecordableHistogram,
} from "node:perf_hooks";
import { EVENT_LOOP_KIND, GC_TYPES, StallRing, STALL_KINDS } from "../model/stalls.js";

/** Bucket boundaries of `v8js.gc.duration`, as the semantic conventions ask for. */
export const GC_DURATION_BUCKETS = [0.01, 0.1, 1, 10] as const;

/** node:perf_hooks GC kinds to STALL_KINDS ids. */
const GC_KIND_IDS = new Map<number, number>([
  [constants.NODE_PERFORMANCE_GC_MAJOR, STALL_KINDS.indexOf("major")],
  [constants.NODE_PERFORMANCE_GC_MINOR, STALL_KINDS.indexOf("minor")],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, STALL_KINDS.indexOf("incremental")],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, STALL_KINDS.indexOf("weakcb")],
]);

/** The event-loop delay statistics of the semantic conventions' `nodejs.eventloop.delay.*` gauges, in seconds. */
export interface EventLoopDelay {
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface ProcessStallsOptions {
  /** The recorder's clock, seconds. Stalls are stored in its time so they compare with visits. */
  clock: () => number;
  /** Stalls kept for explain() and the span bridge. */
  capacity: number;
  /** How often the event-loop probe ticks, in milliseconds. */
  resolutionMs?: number;
  /** A tick later than this (milliseconds) records an event-loop stall. */
  thresholdMs?: number;
  /** Whether any task is in flight here (live journeys); while none is, the probe ticks every `idleResolutionMs`. */
  busy?: () => boolean;
  /** How often the probe ticks while nothing is in flight, in milliseconds. */
  idleResolutionMs?: number;
}

/**
 * Watches this process for stalls, off the task hot path: GC pauses through a PerformanceObserver
 * on `gc` entries, the event loop through an unref'd interval timer. A tick's lateness is the
 * event-loop delay (what `monitorEventLoopDelay` measures with a timer of its own; that one keeps
 * only a histogram, with no times to place a stall in a task's states, and a second timer would
 * double the wakeups), and a tick later than the threshold is a stall from when it was due. Keeps
 * the last stalls in a ring, the delays in a native histogram and the GC durations as a
 * cumulative histogram per GC type.
 */
export class ProcessStalls {
  readonly ring: StallRing;
  /** Per GC type (GC_TYPES order): counts per bucket of GC_DURATION_BUCKETS (plus the overflow bucket). */
  readonly gcBuckets: Float64Array;
  readonly gcCounts = new Float64Array(GC_TYPES.length);
  readonly gcSums = new Float64Array(GC_TYPES.length);
  private readonly clock: () => number;
  private readonly resolutionMs: number;
  private readonly thresholdMs: number;
  private observer: PerformanceObserver | undefined;
  private readonly delays: RecordableHistogram = createHistogram();
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastTick = 0;
  private readonly busy: () => boolean;
  private readonly idleResolutionMs: number;
  /** The probe's period now: resolutionMs while tasks are in flight, idleResolutionMs while none is. */
  private periodMs: number;
  /** Whether work began since the last tick (wake()). */
  private workSinceTick = false;

  constructor(options: ProcessStallsOptions) {
    this.clock = options.clock;
    this.ring = new StallRing(options.capacity);
    this.resolutionMs = options.resolutionMs ?? 20;
    this.thresholdMs = options.thresholdMs ?? 10;
    this.busy = options.busy ?? (() => true);
    this.idleResolutionMs = options.idleResolutionMs ?? 1000;
    this.periodMs = this.resolutionMs;
    this.gcBuckets = new Float64Array(GC_TYPES.length * (GC_DURATION_BUCKETS.length + 1));
  }

  /** Starts the observers and the probe; nothing here keeps the process alive. */
  start(): this {
    this.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const detail = (entry as { detail?: { kind?: number } }).detail;
        this.gc(GC_KIND_IDS.get(detail?.kind ?? -1) ?? STALL_KINDS.indexOf("major"), entry.startTime, entry.duration);
      }
    });
    this.observer.observe({ entryTypes: ["gc"] });
    this.lastTick = performance.now();
    this.schedule(this.resolutionMs);
    return this;
  }

  /**
   * Work began (a journey became live while none was): at the idle period, back to the full rate
   * from now. Remembered for the next tick too, so that tasks that begin and end between two ticks
   * (none live at the tick itself) keep the full rate: without it the probe flapped between its
   * periods, a clearInterval and setInterval each time, 2.2 µs a task of a replayed worker's CPU
   * (cluster-instructions --profile).
   */
  wake(): void {
    this.workSinceTick = true;
    if (this.periodMs === this.resolutionMs) return;
    this.lastTick = performance.now();
    this.schedule(this.resolutionMs);
  }

  /** The probe's period now, in milliseconds. */
  get intervalMs(): number {
    return this.periodMs;
  }

  private schedule(periodMs: number): void {
    this.periodMs = periodMs;
    if (this.observer === undefined) return; // not started (or stopped): the period is all there is to set
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = setInterval(() => this.tick(performance.now()), periodMs);
    this.timer.unref();
  }

  stop(): void {
    this.observer?.disconnect();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.observer = undefined;
    this.timer = undefined;
  }

  /** A GC pause of `kind` (a STALL_KINDS id) that began at `startMs` on the performance clock and lasted `durationMs`. */
  gc(kind: number, startMs: number, durationMs: number): void {
    if (!(durationMs >= 0)) return;
    const seconds = durationMs / 1000;
    const type = kind - 1;
    if (type >= 0 && type < GC_TYPES.length) {
      let bucket = 0;
      while (bucket < GC_DURATION_BUCKETS.length && seconds > GC_DURATION_BUCKETS[bucket]) bucket++;
      this.gcBuckets[type * (GC_DURATION_BUCKETS.length + 1) + bucket] += 1;
      this.gcCounts[type] += 1;
      this.gcSums[type] += seconds;
    }
    const start = this.offset() + startMs / 1000;
    this.ring.push(kind, start, start + seconds);
  }

  /**
   * A probe tick at `nowMs`: later than the period plus the threshold, the loop was blocked since
   * the tick was due. Then the period for what follows: a timer wakeup of an otherwise idle
   * process costs ~250 µs of CPU on a VM (bench/README.md), 50 of them a second 13 ms/s, so with
   * no task in flight and none begun since the last tick (where a stall delays no one) the probe
   * ticks every idleResolutionMs, and from when work begins again (wake()), every resolutionMs.
   */
  tick(nowMs: number): void {
    const due = this.lastTick + this.periodMs;
    this.lastTick = nowMs;
    const late = nowMs - due;
    // Nanoseconds, at least 1: the histogram records positive integers only.
    this.delays.record(late > 0 ? Math.max(1, Math.round(late * 1e6)) : 1);
    if (late > this.thresholdMs) {
      const offset = this.offset();
      this.ring.push(EVENT_LOOP_KIND, offset + due / 1000, offset + nowMs / 1000);
    }
    const busy = this.workSinceTick || this.busy();
    this.workSinceTick = false;
    const period = busy ? this.resolutionMs : this.idleResolutionMs;
    if (period !== this.periodMs) this.schedule(period);
  }

  /**
   * The event-loop delay since the previous call (the histogram is reset), or undefined with no
   * sample: the gauges describe each collection interval, not the process's whole life.
   */
  eventLoopDelay(): EventLoopDelay | undefined {
    const histogram = this.delays;
    if (histogram.count === 0) return undefined;
    const seconds = (nanoseconds: number) => nanoseconds / 1e9;
    const reading = {
      min: seconds(histogram.min),
      max: seconds(histogram.max),
      mean: seconds(histogram.mean),
      stddev: seconds(histogram.stddev),
      p50: seconds(histogram.percentile(50)),
      p90: seconds(histogram.percentile(90)),
      p99: seconds(histogram.percentile(99)),
    };
    histogram.reset();
    return reading;
  }

  /** The recorder's clock (s) minus the performance clock (s) now: what turns a performance time into the recorder's. */
  private offset(): number {
    return this.clock() - performance.now() / 1000;
  }
}
