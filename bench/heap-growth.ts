/**
 * The bytes a piece of work allocates, as the counting benchmarks' drivers (bench/guard/driver.ts,
 * bench/job-queue-driver.ts) read them.
 */
import { PerformanceObserver } from "node:perf_hooks";
import v8 from "node:v8";

/**
 * The heap's used size before and after `work`, after a full collection (needs --expose-gc), with
 * the collections that ran in between: run in a young generation large enough that none does,
 * the difference is what `work` allocated (a collection there makes it no figure: the caller says so).
 */
export async function heapGrowth(work: () => unknown): Promise<{ bytes: number; collections: number }> {
  let collections = 0;
  const observer = new PerformanceObserver((list) => (collections += list.getEntries().length));
  observer.observe({ entryTypes: ["gc"] });
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const before = collections;
  const used = v8.getHeapStatistics().used_heap_size;
  await work();
  const after = v8.getHeapStatistics().used_heap_size;
  // The observer is told of collections asynchronously: let it hear of any that ran.
  await new Promise((resolve) => setTimeout(resolve, 20));
  observer.disconnect();
  return { bytes: after - used, collections: collections - before };
}
