import { describe, expect, it } from "vitest";
import { formatBreakdown, formatBytes, formatSeconds, type Breakdown } from "../../src/index.js";

describe("formatBreakdown", () => {
  it("renders the aligned tree, gather activities of waiting prefixed, the rest plain", () => {
    const breakdown: Breakdown = {
      key: "inc-7f3a",
      prefix: "inc",
      instance: "tcp://10.0.0.7:40001",
      seconds: 10,
      kind: "compute",
      outcome: "memory",
      children: [
        {
          name: "waiting",
          seconds: 8,
          children: [
            { name: "network", seconds: 2, children: [] },
            { name: "queued (local-saturated)", seconds: 1, children: [] },
            { name: "dependencies", seconds: 5, children: [] },
          ],
        },
        { name: "ready", seconds: 1.6, children: [] },
        { name: "executing", seconds: 0.4, children: [{ name: "thread-cpu", seconds: 0.0003, children: [] }] },
      ],
    };
    expect(formatBreakdown(breakdown)).toBe(
      [
        "inc-7f3a spent 10.0 s on worker tcp://10.0.0.7:40001",
        "├─ waiting                         8.0 s",
        "│  ├─ gather: network              2.0 s",
        "│  ├─ queued (local-saturated)     1.0 s",
        "│  └─ dependencies                 5.0 s",
        "├─ ready                           1.6 s",
        "└─ executing                    400.0 ms",
        "   └─ thread-cpu                300.0 µs",
      ].join("\n"),
    );
  });

  it("prefixes gather: under the state marked as waiting for dependencies, whatever the names (a job queue's own machine)", () => {
    const breakdown: Breakdown = {
      key: "7",
      prefix: "email",
      instance: "",
      seconds: 3,
      kind: "compute",
      outcome: "completed",
      waitingState: "waiting-children",
      children: [
        { name: "waiting-children", seconds: 1, children: [{ name: "other", seconds: 1, children: [] }] },
        {
          name: "waiting",
          seconds: 1,
          children: [{ name: "other", seconds: 1, children: [{ name: "gc", seconds: 0.5, children: [] }] }],
        },
        { name: "active", seconds: 1, children: [] },
      ],
    };
    expect(formatBreakdown(breakdown).split("\n")).toEqual([
      "7 spent 3.0 s",
      "├─ waiting-children     1.0 s",
      "│  └─ gather: other     1.0 s",
      "├─ waiting              1.0 s",
      "│  └─ other             1.0 s",
      "│     └─ gc          500.0 ms",
      "└─ active               1.0 s",
    ]);
  });

  it("names a lump under a transfer or serve that did not succeed 'failed (lump)', a user's activity of that name plain", () => {
    const breakdown: Breakdown = {
      key: "x-1",
      prefix: "x",
      instance: "tcp://10.0.0.7:40001",
      seconds: 3,
      kind: "fetch",
      outcome: "memory",
      children: [
        { name: "fetch", seconds: 0.5, children: [] },
        { name: "flight", seconds: 1, outcome: "failed", children: [{ name: "failed", seconds: 1, children: [] }] },
        { name: "flight", seconds: 1, children: [{ name: "busy", seconds: 1, children: [] }] },
        { name: "memory", seconds: 0, children: [] },
      ],
      served: [
        { name: "serve tcp://10.0.0.8:1", seconds: 0.5, children: [{ name: "busy", seconds: 0.5, children: [] }] },
      ],
    };
    expect(formatBreakdown(breakdown).split("\n")).toEqual([
      "x-1 spent 3.0 s on worker tcp://10.0.0.7:40001",
      "├─ fetch                   500.0 ms",
      "├─ flight                     1.0 s  failed",
      "│  └─ failed (lump)           1.0 s",
      "├─ flight                     1.0 s",
      "│  └─ busy                    1.0 s",
      "└─ memory                       0 s",
      "served to peers",
      "└─ serve tcp://10.0.0.8:1  500.0 ms",
      "   └─ busy (lump)          500.0 ms",
    ]);
  });

  it("formats bytes in B, KiB, MiB and GiB", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(65536)).toBe("64.0 KiB");
    expect(formatBytes(1.5 * 2 ** 20)).toBe("1.5 MiB");
    expect(formatBytes(3 * 2 ** 30)).toBe("3.0 GiB");
    expect(formatBytes(Number.NaN)).toBe("-");
  });

  it("formats seconds in µs, ms and s", () => {
    expect(formatSeconds(0)).toBe("0 s");
    expect(formatSeconds(0.0000123)).toBe("12.3 µs");
    expect(formatSeconds(0.25)).toBe("250.0 ms");
    expect(formatSeconds(12.345)).toBe("12.3 s");
    expect(formatSeconds(Number.NaN)).toBe("-");
  });
});
