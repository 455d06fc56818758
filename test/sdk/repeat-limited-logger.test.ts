import { describe, expect, it } from "vitest";
import type { DiagLogger } from "@opentelemetry/api";
import { RepeatLimitedLogger } from "../../src/sdk/repeat-limited-logger.js";

function recording(): { logger: DiagLogger; lines: string[] } {
  const lines: string[] = [];
  const record =
    (level: string) =>
    (message: string, ...args: unknown[]) =>
      lines.push(
        [
          level,
          message,
          ...args.map((arg) =>
            arg instanceof Error ? arg.message : typeof arg === "object" ? "[object]" : String(arg),
          ),
        ].join(" "),
      );
  return {
    lines,
    logger: {
      error: record("error"),
      warn: record("warn"),
      info: record("info"),
      debug: record("debug"),
      verbose: record("verbose"),
    },
  };
}

describe("RepeatLimitedLogger", () => {
  it("tells a repeated warning once, then at most once per repeatMillis with how many times it came in between", () => {
    const { logger, lines } = recording();
    let now = 0;
    const limited = new RepeatLimitedLogger(logger, { now: () => now, repeatMillis: 60_000 });
    for (let export_ = 0; export_ < 12; export_++) {
      limited.warn("OTLPExportDelegate", "could not deserialize response", new Error("Truncated buffer"));
      now += 5_000;
    }
    // At 0 s told; 5 … 55 s counted (11); at 60 s told again with them.
    limited.warn("OTLPExportDelegate", "could not deserialize response", new Error("Truncated buffer"));
    expect(lines).toEqual([
      "warn OTLPExportDelegate could not deserialize response Truncated buffer",
      "warn OTLPExportDelegate could not deserialize response Truncated buffer (and 11 more times like it in the last 60 s)",
    ]);
  });

  it("tells different messages, levels and errors apart; passes info, debug and verbose as they are", () => {
    const { logger, lines } = recording();
    const limited = new RepeatLimitedLogger(logger, { now: () => 0 });
    limited.warn("a", new Error("x"));
    limited.warn("a", new Error("y"));
    limited.error("a", new Error("x"));
    limited.warn("a", new Error("x"));
    limited.info("i");
    limited.info("i");
    limited.debug("d");
    limited.verbose("v");
    expect(lines).toEqual(["warn a x", "warn a y", "error a x", "info i", "info i", "debug d", "verbose v"]);
  });

  it("remembers at most maxKinds messages, forgetting the oldest first; a hostile argument does not throw", () => {
    const { logger, lines } = recording();
    const limited = new RepeatLimitedLogger(logger, { now: () => 0, maxKinds: 2 });
    limited.warn("one");
    limited.warn("two");
    limited.warn("three"); // "one" forgotten
    limited.warn("one"); // told again; "two" forgotten
    limited.warn("three");
    const hostile = {
      toString() {
        throw new Error("no");
      },
    };
    expect(() => limited.warn("h", hostile)).not.toThrow();
    expect(lines.slice(0, 4)).toEqual(["warn one", "warn two", "warn three", "warn one"]);
  });
});
