/**
 * Deprecated forms (a positional call, a flat option name, an old verb) told to this process:
 * each form once, whichever TaskJourneys met it, as Node's own deprecation warnings are. The
 * text goes through the caller's `tell` (the package's one warning path, otel/warn.ts), so
 * recorder/ stays free of OpenTelemetry.
 */
const told = new Set<string>();

/** Tells once per process that `form` is deprecated and what to write instead. Never throws. */
export function deprecated(tell: (message: string) => void, form: string, instead: string): void {
  if (told.has(form)) return;
  told.add(form);
  tell(
    `taskjourney: ${form} is deprecated and will be removed in the next minor release; write ${instead} instead. ` +
      "(Told once per process.)",
  );
}

/** @internal For tests: forget what was told, so each test sees its own first warning. */
export function forgetDeprecationsTold(): void {
  told.clear();
}
