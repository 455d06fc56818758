/**
 * The diag logger taskjourney/sdk installs when the application registered none: the SDK's
 * DiagConsoleLogger, with each warning or error that repeats told once, and then at most once per
 * `repeatMillis` with how many times it came in between.
 *
 * Why: the OpenTelemetry exporters warn on every export for endpoint behaviours that lose nothing,
 * e.g. a 200 whose body is not an OTLP response ("Export succeeded but could not deserialize
 * response", "Failed to parse trace export response"): a line per signal every few seconds for as
 * long as the endpoint answers so, where the rule is that a user learns of each kind of problem
 * once. Info, debug and verbose lines, asked for with OTEL_LOG_LEVEL, pass as they are. A message
 * is its text and the text of its first arguments (an error by its message); at most `maxKinds`
 * are remembered, the oldest forgotten first (then told again once), so the cost is bounded.
 */
import type { DiagLogFunction, DiagLogger } from "@opentelemetry/api";

interface Seen {
  /** When it was last told (`now()` milliseconds), and how many times it came since, untold. */
  toldAt: number;
  untold: number;
}

export interface RepeatLimitOptions {
  now?: () => number;
  /** The least time between two tellings of one message; default one minute. */
  repeatMillis?: number;
  /** Messages remembered at most; default 256. */
  maxKinds?: number;
}

/** Text enough to tell two messages apart, from what a logger is given; never throws. */
function textOf(value: unknown): string {
  try {
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    if (typeof value === "string") return value;
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
    return typeof value;
  } catch {
    return typeof value;
  }
}

const KEY_ARGUMENTS = 3;
const KEY_LENGTH = 500;

export class RepeatLimitedLogger implements DiagLogger {
  private readonly seen = new Map<string, Seen>();
  private readonly now: () => number;
  private readonly repeatMillis: number;
  private readonly maxKinds: number;

  readonly error: DiagLogFunction;
  readonly warn: DiagLogFunction;
  readonly info: DiagLogFunction;
  readonly debug: DiagLogFunction;
  readonly verbose: DiagLogFunction;

  constructor(inner: DiagLogger, options: RepeatLimitOptions = {}) {
    this.now = options.now ?? Date.now;
    this.repeatMillis = options.repeatMillis ?? 60_000;
    this.maxKinds = options.maxKinds ?? 256;
    this.error = (message, ...args) => this.limited("error", inner, message, args);
    this.warn = (message, ...args) => this.limited("warn", inner, message, args);
    this.info = (message, ...args) => inner.info(message, ...args);
    this.debug = (message, ...args) => inner.debug(message, ...args);
    this.verbose = (message, ...args) => inner.verbose(message, ...args);
  }

  private limited(level: "error" | "warn", inner: DiagLogger, message: string, args: unknown[]): void {
    let key = `${level}\u0000${textOf(message)}`;
    for (let index = 0; index < Math.min(args.length, KEY_ARGUMENTS); index++) key += `\u0000${textOf(args[index])}`;
    if (key.length > KEY_LENGTH) key = key.slice(0, KEY_LENGTH);
    const now = this.now();
    const seen = this.seen.get(key);
    if (seen === undefined) {
      if (this.seen.size >= this.maxKinds) this.seen.delete(this.seen.keys().next().value!);
      this.seen.set(key, { toldAt: now, untold: 0 });
      inner[level](message, ...args);
      return;
    }
    if (now - seen.toldAt < this.repeatMillis) {
      seen.untold++;
      return;
    }
    const more = seen.untold;
    const seconds = Math.round((now - seen.toldAt) / 1000);
    seen.toldAt = now;
    seen.untold = 0;
    if (more === 0) inner[level](message, ...args);
    else inner[level](message, ...args, `(and ${more} more times like it in the last ${seconds} s)`);
  }
}
