import { diag } from "@opentelemetry/api";

/**
 * Where @opentelemetry/api 1.x keeps its globals, shared by every copy of the API in the process.
 * The API has no getter for the diag logger, and this key is the contract between those copies.
 */
const API_GLOBALS = Symbol.for("opentelemetry.js.api.1");

/** The diag logger the application (or taskjourney/sdk) registered, or undefined. */
export function registeredDiagLogger(): unknown {
  return (globalThis as { [API_GLOBALS]?: { diag?: unknown } })[API_GLOBALS]?.diag;
}

/** OTEL_LOG_LEVEL names that leave warnings out (errors, too, for "none"). */
function quietFor(level: "warn" | "error"): boolean {
  const text = globalThis.process?.env?.OTEL_LOG_LEVEL?.toUpperCase();
  return text === "NONE" || (level === "warn" && text === "ERROR");
}

/**
 * Tells a problem (each kind once: the callers decide that) through `diag` when a logger is
 * registered, and on stderr when none is: diag drops messages until someone installs a logger,
 * and a user of TaskJourneys with an SDK of their own (which installs none unless OTEL_LOG_LEVEL is
 * set) would otherwise learn of nothing. OTEL_LOG_LEVEL=error (or none) silences the warnings, as
 * it does the SDKs'. Never throws.
 */
export function tell(level: "warn" | "error", message: string, error?: unknown): void {
  try {
    if (registeredDiagLogger() !== undefined) {
      if (level === "warn") diag.warn(message);
      else diag.error(message, error);
      return;
    }
    if (quietFor(level)) return;
    const detail = error === undefined ? "" : `: ${error instanceof Error ? error.message : String(error)}`;
    globalThis.process?.stderr?.write(`${message}${detail}\n`);
  } catch {
    // A broken stderr or a hostile error's toString: telemetry never throws into the host.
  }
}
