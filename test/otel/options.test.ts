import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { forgetDeprecationsTold } from "../../src/recorder/deprecations.js";
import { captureDiag } from "../helpers/diag.js";
import { TaskJourneys } from "../../src/index.js";
import { DEFAULT_OPTIONS } from "../../src/journeys.js";
import { resolveOptions } from "../../src/journeys.js";
import { FLAT_OPTIONS } from "../../src/option-groups.js";
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
  // An option added since 0.1: grouped only (no flat name).
  ["limits.maxComputations", { limits: { maxComputations: 0 } }],
  ["limits.maxComputations", { limits: { maxComputations: 100_001 } }],
  ["limits.maxComputations", { limits: { maxComputations: 2.5 } }],
];

describe("options validation", () => {
  it.each(BAD)("rejects a bad %s with a TypeError naming it by its path, given grouped or flat", (option, options) => {
    const path = (FLAT_OPTIONS as Record<string, string>)[option] ?? option;
    const expected = new RegExp(`option "${path.replace(".", "\\.")}" must be`);
    // The case as 0.2 writes it, { limits: { maxPrefixes: 0 } }, and as 0.1 did, { prefixLimit: 0 }.
    const [[name, value]] = Object.entries(options as object);
    const [group, field] = ((FLAT_OPTIONS as Record<string, string>)[name] ?? "").split(".");
    const grouped = (group === undefined || field === undefined ? options : { [group]: { [field]: value } }) as {
      runtime?: object;
    };
    const cases = [
      { ...grouped, runtime: { clock, ...grouped.runtime } },
      { clock, ...(options as object) },
    ] as TaskJourneysOptions[];
    for (const given of cases) {
      expect(() => new TaskJourneys(given)).toThrow(TypeError);
      expect(() => new TaskJourneys(given)).toThrow(expected);
      expect(() => resolveOptions(given)).toThrow(expected);
    }
  });

  it("rejects options that are not an object", () => {
    expect(() => new TaskJourneys(null as never)).toThrow(/option "options" must be an object/);
    expect(() => resolveOptions(42 as never)).toThrow(TypeError);
  });

  it("shows the bad value in the message", () => {
    expect(() => new TaskJourneys({ runtime: { clock }, limits: { maxPrefixes: 0 } })).toThrow(
      'TaskJourneys: option "limits.maxPrefixes" must be an integer from 1 to 100000, got 0',
    );
    expect(() => new TaskJourneys({ clock, role: "client" as never })).toThrow('got "client"');
  });

  it("covers every option of DEFAULT_OPTIONS", () => {
    const tested = new Set(BAD.map(([option]) => (FLAT_OPTIONS as Record<string, string>)[option] ?? option));
    for (const [option, value] of Object.entries(DEFAULT_OPTIONS)) {
      if (typeof value !== "object") expect(tested, option).toContain(option);
      else for (const field of Object.keys(value)) expect(tested, `${option}.${field}`).toContain(`${option}.${field}`);
    }
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
    // DEFAULT_OPTIONS grouped, read back under the flat names the resolved options keep.
    const { sampling: defaultSampling, runtime, ...groups } = DEFAULT_OPTIONS;
    const { clock: _d, processStalls: defaultStalls, ...runtimeRest } = runtime;
    const defaultRest = Object.fromEntries(
      Object.entries({ ...groups, runtime: runtimeRest }).flatMap(([name, value]) =>
        typeof value === "object"
          ? Object.entries(value).map(([field, inner]) => [
              // An option added since 0.1 has no flat name: resolved under its field's.
              Object.entries(FLAT_OPTIONS).find(([, path]) => path === `${name}.${field}`)?.[0] ?? field,
              inner,
            ])
          : [[name, value]],
      ),
    );
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
    expect(() => new TaskJourneys({ clock, histogramMaxSize: 2 ** 25 })).toThrow(/option "metrics\.histogramMaxSize"/);
    expect(() => new TaskJourneys({ clock, limits: { maxPrefixes: 1e9 } })).toThrow(/option "limits\.maxPrefixes"/);
    expect(() => new TaskJourneys({ clock, activityLimit: 1e9 })).toThrow(/option "limits\.maxActivities"/);
  });

  it("keeps a partial sampling object's other defaults", () => {
    expect(resolveOptions({ clock, sampling: { ratio: 0.5 } }).sampling).toEqual({
      ratio: 0.5,
      keepSlowerThan: 0.99,
      keepErrors: true,
    });
  });
});

describe("option names", () => {
  beforeEach(() => forgetDeprecationsTold());
  afterEach(() => diag.disable());

  it.each([
    ["samplingRatio", { samplingRatio: 0.5 }, "sampling.ratio"],
    ["ratio", { ratio: 0.5 }, "sampling.ratio"],
    ["prefixLimt", { prefixLimt: 5 }, "limits.maxPrefixes"],
    ["sampling.ratoi", { sampling: { ratoi: 0.5 } }, "sampling.ratio"],
    ["limits.maxPrefix", { limits: { maxPrefix: 5 } }, "limits.maxPrefixes"],
    ["runtime.asyncContxt", { runtime: { asyncContxt: false } }, "runtime.asyncContext"],
    ["retainedJourney", { retainedJourney: 5 }, "retention.journeys"],
  ])("refuses the unknown name %s, naming the nearest valid one", (name, options, nearest) => {
    expect(() => new TaskJourneys({ clock, ...options } as never)).toThrow(
      new RegExp(
        `^TaskJourneys: unknown option "${name.replace(".", "\\.")}"; did you mean "${nearest.replace(".", "\\.")}"\\?`,
      ),
    );
  });

  it("refuses a name near nothing without a guess, listing the options", () => {
    expect(() => new TaskJourneys({ clock, colour: "blue" } as never)).toThrow(
      /^TaskJourneys: unknown option "colour" \(the options: role, machine, .*runtime\.processStalls/,
    );
  });

  it("takes each deprecated flat name as its path, told once per process with the path to write", () => {
    const told = captureDiag();
    const flat = resolveOptions({ clock, prefixLimit: 7, retainedJourneys: 3, temporality: "delta" });
    const grouped = resolveOptions({
      runtime: { clock },
      limits: { maxPrefixes: 7 },
      retention: { journeys: 3 },
      metrics: { temporality: "delta" },
    });
    const { clockReading: _a, timeOrigin: _b, ...flatRest } = flat;
    const { clockReading: _c, timeOrigin: _d, ...groupedRest } = grouped;
    expect(flatRest).toEqual(groupedRest);
    resolveOptions({ clock, prefixLimit: 8 });
    expect(told).toEqual([
      'taskjourney: option "clock" is deprecated and will be removed in the next minor release; write runtime: { clock } instead. (Told once per process.)',
      'taskjourney: option "prefixLimit" is deprecated and will be removed in the next minor release; write limits: { maxPrefixes } instead. (Told once per process.)',
      'taskjourney: option "retainedJourneys" is deprecated and will be removed in the next minor release; write retention: { journeys } instead. (Told once per process.)',
      'taskjourney: option "temporality" is deprecated and will be removed in the next minor release; write metrics: { temporality } instead. (Told once per process.)',
    ]);
  });

  it("refuses a flat name and its path given different values; the same value is fine", () => {
    expect(() => resolveOptions({ runtime: { clock }, prefixLimit: 7, limits: { maxPrefixes: 8 } })).toThrow(
      'TaskJourneys: option "limits.maxPrefixes" must be the value of the deprecated "prefixLimit" given with it, 7, got 8',
    );
    expect(resolveOptions({ runtime: { clock }, prefixLimit: 7, limits: { maxPrefixes: 7 } }).prefixLimit).toBe(7);
  });

  it("refuses a group that is not an object, naming its fields", () => {
    expect(() => new TaskJourneys({ runtime: { clock }, limits: 5 } as never)).toThrow(
      'TaskJourneys: option "limits" must be an object: { maxPrefixes?, maxActivities?, maxLiveJourneys?, maxKeyLength?, maxClockSkew?, maxComputations? }, got 5',
    );
  });
});
