import type { TracerProvider } from "@opentelemetry/api";

/** Flushes a provider's processors, if it has any; a global proxy is asked for its delegate. */
export async function flush(provider: TracerProvider | undefined): Promise<void> {
  if (provider === undefined) return;
  type Flushable = { forceFlush?: () => Promise<unknown>; getDelegate?: () => unknown };
  let target = provider as Flushable;
  if (typeof target.forceFlush !== "function" && typeof target.getDelegate === "function")
    target = target.getDelegate() as Flushable;
  if (typeof target?.forceFlush === "function") await target.forceFlush();
}
