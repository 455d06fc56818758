import { afterEach, describe, expect, it, vi } from "vitest";
import { diag } from "@opentelemetry/api";
import { TaskJourneys } from "../../src/index.js";
import { captureDiag } from "../helpers/diag.js";

// A user of TaskJourneys with an SDK of their own has no diag logger unless they set one up:
// taskjourney's problems must still reach them, once per kind, on stderr.
describe("problems told without a diag logger", () => {
  afterEach(() => {
    diag.disable();
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  function stderrLines(): string[] {
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    return lines;
  }

  function misspell(journeys: TaskJourneys): void {
    journeys.transition("x-1", "released", "waiting");
    journeys.transition("x-1", "waiting", "redy" as "ready");
    journeys.transition("x-1", "waiting", "redy" as "ready");
  }

  it("no logger registered: once per kind, on stderr, and counted", () => {
    diag.disable();
    vi.stubEnv("OTEL_LOG_LEVEL", undefined);
    const lines = stderrLines();
    const journeys = new TaskJourneys({ role: "worker" });
    misspell(journeys);
    expect(journeys.dropped()).toEqual({ "unknown-state": 2 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^taskjourney: .*unknown-state.*"redy".*\n$/);
  });

  it("OTEL_LOG_LEVEL=error (or none) silences the warnings; the counts stay", () => {
    diag.disable();
    vi.stubEnv("OTEL_LOG_LEVEL", "error");
    const lines = stderrLines();
    const journeys = new TaskJourneys({ role: "worker" });
    misspell(journeys);
    expect(lines).toEqual([]);
    expect(journeys.dropped()).toEqual({ "unknown-state": 2 });
  });

  it("a logger registered: through diag, not stderr", () => {
    const messages = captureDiag();
    const lines = stderrLines();
    misspell(new TaskJourneys({ role: "worker" }));
    expect(lines).toEqual([]);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain("unknown-state");
  });
});
