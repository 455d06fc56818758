import { describe, expect, it } from "vitest";
import { TaskJourneys } from "../../src/index.js";
import { DEFAULT_OPTIONS } from "../../src/journeys.js";
import { resolveOptions } from "../../src/journeys.js";
import { PRESETS } from "../../src/model/states.js";
import type { TaskJourneysOptions } from "../../src/types.js";

const clock = () => 0;

/** Bad values per option, each of which must throw a TypeError naming the option. */
const BAD: Array<[option: string, options: unknown]> = [
  ["role", { role: "client" }],
  ["role", { role: 1 }],
  ["role", { role: null }],
  ["instance", { instance: 7 }],
  ["instance", { instance: null }],
  ["clock", { clock: "now" }],
  ["clock", { clock: () => Number.NaN }],
  ["clock", { clock: () => Infinity }],
  ["clock", { clock: () => "0" }],
  ["clock", { clock: () => -1 }],
  ["sampling.ratio", { sampling: { ratio: -0.1 } }],
  ["sampling.ratio", { sampling: { ratio: 1.5 } }],
  ["sampling.ratio", { sampling: { ratio: Number.NaN } }],
  ["sampling.ratio", { sampling: { ratio: "0.5" } }],
  ["sampling.keepSlowerThan", { sampling: { keepSlowerThan: 2 } }],
  ["sampling.keepSlowerThan", { sampling: { keepSlowerThan: -1 } }],
  ["sampling.keepErrors", { sampling: { keepErrors: "yes" } }],
  ["prefixLimit", { prefixLimit: 0 }],
  ["prefixLimit", { prefixLimit: 1.5 }],
  ["prefixLimit", { prefixLimit: "100" }],
  ["prefixLimit", { prefixLimit: Infinity }],
  ["activityLimit", { activityLimit: 0 }],
  ["activityLimit", { activityLimit: 2.5 }],
  ["retainedJourneys", { retainedJourneys: -1 }],
  ["retainedJourneys", { retainedJourneys: Number.NaN }],
  ["retainedJourneys", { retainedJourneys: 1e8 }],
  ["retainedJourneyBytes", { retainedJourneyBytes: -1 }],
  ["retainedJourneyBytes", { retainedJourneyBytes: 0.5 }],
  ["maxLiveJourneys", { maxLiveJourneys: 0 }],
  ["maxLiveJourneys", { maxLiveJourneys: 1.5 }],
  ["maxLiveJourneys", { maxLiveJourneys: Infinity }],
  ["maxKeyLength", { maxKeyLength: 0 }],
  ["histogramMaxSize", { histogramMaxSize: 1 }],
  ["histogramMaxSize", { histogramMaxSize: 10.5 }],
  ["maxLinksPerSpan", { maxLinksPerSpan: -1 }],
  ["maxAttributeLength", { maxAttributeLength: 7 }],
  ["maxKeysPerTransfer", { maxKeysPerTransfer: -2 }],
  ["maxChildrenPerSpan", { maxChildrenPerSpan: -1 }],
  ["maxChildrenPerSpan", { maxChildrenPerSpan: 0.5 }],
  ["strict", { strict: 1 }],
  ["asyncContext", { asyncContext: "no" }],
  ["maxClockSkew", { maxClockSkew: 0 }],
  ["traces", { traces: "no" }],
  ["maxClockSkew", { maxClockSkew: Number.NaN }],
  ["maxClockSkew", { maxClockSkew: "1d" }],
  ["processStalls", { processStalls: 1 }],
  ["executeTimeByPrefix", { executeTimeByPrefix: "true" }],
  ["temporality", { temporality: "Delta" }],
  ["temporality", { temporality: 0 }],
  ["histogram", { histogram: "linear" }],
  ["explicitBuckets", { explicitBuckets: [1, 1] }],
  ["explicitBuckets", { explicitBuckets: [5, 1] }],
  ["explicitBuckets", { explicitBuckets: [1, Infinity] }],
  ["explicitBuckets", { explicitBuckets: [1, "2"] }],
  ["explicitBuckets", { explicitBuckets: "1,2" }],
  ["timeOrigin", { timeOrigin: Number.NaN }],
  ["timeOrigin", { timeOrigin: "2024-01-01" }],
];

describe("options validation", () => {
  it.each(BAD)("rejects a bad %s with a TypeError naming it", (option, options) => {
    const withClock = { clock, ...(options as object) } as TaskJourneysOptions;
    const expected = new RegExp(`option "${option.replace(".", "\\.")}" must be`);
    expect(() => new TaskJourneys(withClock)).toThrow(TypeError);
    expect(() => new TaskJourneys(withClock)).toThrow(expected);
    expect(() => resolveOptions(withClock)).toThrow(expected);
  });

  it("rejects options that are not an object", () => {
    expect(() => new TaskJourneys(null as never)).toThrow(/option "options" must be an object/);
    expect(() => resolveOptions(42 as never)).toThrow(TypeError);
  });

  it("shows the bad value in the message", () => {
    expect(() => new TaskJourneys({ clock, prefixLimit: 0 })).toThrow(
      'TaskJourneys: option "prefixLimit" must be an integer from 1 to 100000, got 0',
    );
    expect(() => new TaskJourneys({ clock, role: "client" as never })).toThrow('got "client"');
  });

  it("covers every option of DEFAULT_OPTIONS", () => {
    const tested = new Set(BAD.map(([option]) => option.split(".")[0]));
    for (const option of Object.keys(DEFAULT_OPTIONS)) expect(tested, option).toContain(option);
  });

  it("accepts the edges of every range and fills in the defaults", () => {
    const resolved = resolveOptions({
      clock,
      role: "scheduler",
      instance: "",
      sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: false },
      prefixLimit: 1,
      activityLimit: 1,
      retainedJourneys: 0,
      maxKeyLength: 1,
      histogramMaxSize: 2,
      maxLinksPerSpan: 0,
      maxAttributeLength: 8,
      maxKeysPerTransfer: 0,
      maxChildrenPerSpan: 0,
      explicitBuckets: [],
      timeOrigin: 0,
    });
    expect(resolved).toMatchObject({
      role: "scheduler",
      prefixLimit: 1,
      retainedJourneys: 0,
      timeOrigin: 0,
      temporality: "cumulative",
      histogram: "exponential",
    });
    expect(resolved.sampling).toEqual({ ratio: 1, keepSlowerThan: 0, keepErrors: false });
    expect(
      () =>
        new TaskJourneys({
          clock,
          sampling: { ratio: 0 },
          temporality: "delta",
          histogram: "explicit",
          explicitBuckets: [-1, 0, 0.5],
        }),
    ).not.toThrow();

    const defaults = resolveOptions({ clock });
    const { clock: _c, sampling, timeOrigin, machine, processStalls, clockReading: _r, ...rest } = defaults;
    const { clock: _d, sampling: defaultSampling, processStalls: defaultStalls, ...defaultRest } = DEFAULT_OPTIONS;
    expect(rest).toEqual(defaultRest);
    // No machine given: the role's Dask preset, compiled once for all journeys.
    expect(machine).toBe(PRESETS.worker);
    expect(resolveOptions({ clock, role: "scheduler" }).machine).toBe(PRESETS.scheduler);
    // Stalls are timed on the performance clock: watched by default with it, not with a clock of the caller's.
    expect([
      defaultStalls,
      processStalls,
      resolveOptions({}).processStalls,
      resolveOptions({ clock, processStalls: true }).processStalls,
    ]).toEqual([true, false, true, true]);
    expect(sampling).toEqual(defaultSampling);
    // Without a timeOrigin, clock() = 0 is "now" in epoch seconds.
    expect(Math.abs(timeOrigin - Date.now() / 1000)).toBeLessThan(5);
  });

  // Forwarding an optional value (`prefixLimit: config.prefixLimit`) must not throw.
  it("takes an option given as undefined as its default", () => {
    expect(resolveOptions({ clock, role: undefined, prefixLimit: undefined, temporality: undefined })).toMatchObject({
      role: "worker",
      prefixLimit: 100,
      temporality: "cumulative",
    });
  });
  // ExponentialHistogram rejects huge sizes; the error must come at construction, not from inside
  // transition().
  it("rejects a histogramMaxSize the histograms cannot have, at construction", () => {
    expect(() => new TaskJourneys({ clock, histogramMaxSize: 2 ** 25 })).toThrow(/option "histogramMaxSize"/);
    expect(() => new TaskJourneys({ clock, prefixLimit: 1e9 })).toThrow(/option "prefixLimit"/);
    expect(() => new TaskJourneys({ clock, activityLimit: 1e9 })).toThrow(/option "activityLimit"/);
  });

  it("keeps a partial sampling object's other defaults", () => {
    expect(resolveOptions({ clock, sampling: { ratio: 0.5 } }).sampling).toEqual({
      ratio: 0.5,
      keepSlowerThan: 0.99,
      keepErrors: true,
    });
  });
});
