import { context, diag, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { TracerProvider } from "@opentelemetry/sdk-trace";
import { type Server } from "node:http";
import { DEFAULT_FLUSH_TIMEOUT } from "./environment.js";
import type { FlushOptions } from "./options.js";

/** What `startTelemetry()` sets up and tears down around the providers: the globals, the Prometheus server's listen and close, flush deadlines. */

/**
 * What 2.x's NodeTracerProvider.register() did, which `@opentelemetry/sdk-trace` (both lines)
 * leaves to the caller: the global tracer provider, an AsyncLocalStorage context manager and
 * the W3C trace-context and baggage propagators.
 */
export function registerTracing(tracerProvider: TracerProvider): void {
  trace.setGlobalTracerProvider(tracerProvider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
}

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : port);
    });
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

/** The flush deadline of `options`; a bad one is told and replaced by the default (shutdown must not throw). */
export function flushTimeout(call: string, options: FlushOptions | undefined): number {
  const value = options?.timeoutMillis;
  if (value === undefined) return DEFAULT_FLUSH_TIMEOUT;
  if (typeof value === "number" && value > 0) return value;
  diag.warn(
    `taskjourney: ${call}({ timeoutMillis }) must be a positive number of milliseconds, got ${typeof value === "number" ? value : typeof value}; waiting ${DEFAULT_FLUSH_TIMEOUT} ms`,
  );
  return DEFAULT_FLUSH_TIMEOUT;
}

/**
 * `work`'s value (work that never rejects), or undefined once `timeoutMillis` passed first. The
 * timer is not unref'd: work waiting on a callback that holds no handle must still see its deadline.
 */
export function within<T>(work: Promise<T>, timeoutMillis: number): Promise<T | undefined> {
  if (!Number.isFinite(timeoutMillis)) return work;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMillis);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}
