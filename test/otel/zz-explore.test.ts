import { it } from "vitest";
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from "@opentelemetry/sdk-metrics";
import { TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../../test/helpers/clock.js";

it("explore", async () => {
  const clock = new FakeClock(0);
  const journeys = new TaskJourneys({ role: "worker", instance: "w", clock: clock.now, sampling: { ratio: 0 } });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 2 ** 31 - 1, metricProducers: [journeys.metricProducer] });
  const provider = new MeterProvider({ readers: [reader] });
  journeys.transition("inc-1", "released", "waiting");
  clock.advance(2);
  journeys.transition("inc-1", "waiting", "ready");
  clock.advance(3);
  const ex = journeys.execute("inc-1");
  ex.meter("thread-cpu", () => clock.advance(1));
  clock.advance(0.5);
  ex.end("memory");
  await reader.forceFlush();
  console.log(JSON.stringify(exporter.getMetrics(), null, 1).slice(0, 6000));
  await provider.shutdown();
});
