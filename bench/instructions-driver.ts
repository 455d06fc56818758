/**
 * One case of bench/instructions.bench.ts, run under valgrind: `journeys` journeys of `case`,
 * nothing printed. The bench runs each case twice, with two journey counts, and divides the
 * difference of the instruction counts by the difference of the counts, so start-up, warm-up
 * and the final flush cancel out.
 *
 *   node --predictable --import tsx bench/instructions-driver.ts <case> <journeys>
 */
import { TracerProvider as BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace";
import { library } from "./lib.js";
import { plainMetrics, plainMetricsJourney, plainSpansJourney } from "./plain-otel.js";
import { countingClock, keyPool, prefixNames, workerJourney } from "./workload.js";
// Not in the package entry (an internal): the default clock, from its source.
import { DEFAULT_OPTIONS } from "../src/journeys.js";

const { TaskJourneys } = library;

export const CASES = ["clock-floor", "journey", "plain-metrics", "spans-all", "plain-spans"] as const;
export type InstructionCase = (typeof CASES)[number];

const PREFIXES = 100;
const KEY_POOL = 1 << 16;
const IN_FLIGHT = 1000;
/** Journeys between two flushes of the span pipeline, as in spans.bench.ts. */
const FLUSH_EVERY = 1024;

const names = prefixNames(PREFIXES);
const keys = keyPool(KEY_POOL, names, 1);
const inFlightKeys = keyPool(IN_FLIGHT, names, 3);
const clock = DEFAULT_OPTIONS.runtime.clock;
const OFF = { ratio: 0, keepSlowerThan: 0, keepErrors: false };

function journeys(options: ConstructorParameters<typeof TaskJourneys>[0]): InstanceType<typeof TaskJourneys> {
  const recorder = new TaskJourneys({ role: "worker", limits: { maxPrefixes: PREFIXES }, ...options });
  for (const key of inFlightKeys) recorder.transition(key, "released", "waiting");
  return recorder;
}

/** How often the taskjourney journey reads the clock, counted. */
export function journeyClockReads(): number {
  const counted = countingClock(clock);
  const probe = journeys({ sampling: OFF, runtime: { clock: counted.clock } });
  const before = counted.reads();
  workerJourney(probe, keys[0]);
  return counted.reads() - before;
}

function spanPipeline(): { provider: BasicTracerProvider; drain: () => Promise<void> } {
  const exporter: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
  const processor = new BatchSpanProcessor({ exporter: exporter, maxQueueSize: 1 << 20, maxExportBatchSize: 1 << 20 });
  return { provider: new BasicTracerProvider({ spanProcessors: [processor] }), drain: () => processor.forceFlush() };
}

/** The journey of one key for `name`, and what to do after every FLUSH_EVERY journeys. */
function makeCase(name: InstructionCase): { journey: (key: string) => void; flush?: () => Promise<void> } {
  switch (name) {
    case "clock-floor": {
      const reads = journeyClockReads();
      return {
        journey: () => {
          for (let i = 0; i < reads; i++) clock();
        },
      };
    }
    case "journey": {
      const recorder = journeys({ sampling: OFF });
      return { journey: (key) => workerJourney(recorder, key) };
    }
    case "plain-metrics":
      return { journey: plainMetricsJourney(plainMetrics(), clock, journeyClockReads()) };
    case "spans-all": {
      const pipeline = spanPipeline();
      const recorder = journeys({
        sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
        tracerProvider: pipeline.provider,
      });
      return { journey: (key) => workerJourney(recorder, key), flush: pipeline.drain };
    }
    case "plain-spans": {
      const pipeline = spanPipeline();
      const tracer = pipeline.provider.getTracer("bench-plain-otel");
      return { journey: (key) => plainSpansJourney(tracer, key), flush: pipeline.drain };
    }
  }
}

async function main(): Promise<void> {
  const [name, count] = process.argv.slice(2);
  if (!(CASES as readonly string[]).includes(name) || !(Number(count) > 0)) {
    console.error(`usage: instructions-driver.ts <${CASES.join("|")}> <journeys>`);
    process.exit(2);
  }
  const { journey, flush } = makeCase(name as InstructionCase);
  const total = Number(count);
  for (let done = 0; done < total; done++) {
    journey(keys[done & (KEY_POOL - 1)]);
    if (flush !== undefined && (done + 1) % FLUSH_EVERY === 0) await flush();
  }
  if (flush !== undefined) await flush();
}

if (/instructions-driver\.(ts|mjs)$/.test(process.argv[1] ?? "")) await main();
