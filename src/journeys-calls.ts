/**
 * The facade's recording calls given their trailing options object (`{ at, error, prefix }`,
 * `{ at, prefix }`, `{ bytes, at }`), or the deprecated positional values (told once): apart from
 * journeys.ts, so the usual call, with nothing after its arguments, stays small there.
 */
import type { Key } from "./model/keys.js";
import { show } from "./model/show.js";
import { cutName, MAX_NAME_LENGTH } from "./model/names.js";
import { isCallOptions } from "./recorder/call-options.js";
import type { ExecutionLedger } from "./recorder/execution-ledger.js";
import type { NoLedger } from "./recorder/no-ledger.js";
import type { Recorder } from "./recorder/recorder.js";
import type { TransferLedger } from "./recorder/transfer-ledger.js";

/** The names of each call's trailing options object (call-options.ts tells them from the deprecated positional values). */
const TRANSITION_OPTIONS = ["at", "error", "prefix", "computation"] as const;
const EXECUTE_OPTIONS = ["at", "prefix"] as const;
const GATHER_OPTIONS = ["bytes", "at"] as const;
export const SERVE_OPTIONS = ["context", "at"] as const;

/** transition() given options, or the deprecated positional `at, error`: apart, so the usual call stays small. */
export function transitionWith(
  recorder: Recorder,
  key: Key,
  from: string,
  to: string,
  options: unknown,
  legacyError: unknown,
): void {
  if (legacyError !== undefined || !isCallOptions(options, TRANSITION_OPTIONS)) {
    recorder.failures.deprecated("transition(key, from, to, at, error)", "transition(key, from, to, { at, error })");
    recorder.transition(key, from, to, options as number | undefined, legacyError);
    return;
  }
  let at: unknown, error: unknown, prefix: unknown, computation: unknown;
  try {
    ({ at, error, prefix, computation } = options);
  } catch {
    recorder.drop("invalid-options", "transition() given options that threw when read; recorded as if given none");
    recorder.transition(key, from, to, undefined, undefined);
    return;
  }
  // Apart, with its own closures: a closure here makes every call's context (bench/guard's `timed`: +341 B a journey).
  if (computation !== undefined) {
    transitionIn(recorder, key, from, to, at, error, prefix, computation);
    return;
  }
  // No closure unless a prefix is given: a call with `{ at }` allocates nothing of its own.
  if (prefix === undefined) recorder.transition(key, from, to, at as number | undefined, error);
  else
    withPrefix(recorder, "transition()", prefix, () =>
      recorder.transition(key, from, to, at as number | undefined, error),
    );
}

/**
 * Runs `record` with `prefix` as the prefix of a journey it begins (the recorder's prefix hint,
 * cleared after: nothing is kept per key). A prefix that is not a non-empty string is counted
 * (`invalid-description`) and left out.
 */
export function withPrefix<T>(recorder: Recorder, call: string, prefix: unknown, record: () => T): T {
  if (prefix === undefined) return record();
  if (typeof prefix !== "string" || prefix === "") {
    recorder.drop("invalid-description", `${call} given the prefix ${show(prefix)}, not a non-empty string; left out`);
    return record();
  }
  recorder.prefixHint = prefix;
  try {
    return record();
  } finally {
    recorder.prefixHint = undefined;
  }
}

/**
 * transition() with a computation: the computation of a journey it begins (the recorder's
 * computation hint, cleared after, as the prefix's). One that is not a non-empty string is counted
 * (`invalid-computation`) and left out; one longer than a metric attribute takes is cut.
 */
function transitionIn(
  recorder: Recorder,
  key: Key,
  from: string,
  to: string,
  at: unknown,
  error: unknown,
  prefix: unknown,
  computation: unknown,
): void {
  let name: string | undefined = undefined;
  if (typeof computation !== "string" || computation === "") {
    recorder.drop(
      "invalid-computation",
      `transition() given the computation ${show(computation)}, not a non-empty string; left out`,
    );
  } else if (computation.length > MAX_NAME_LENGTH) {
    recorder.failures.fault(
      "name-too-long",
      `a computation name of ${computation.length} characters ("${computation.slice(0, 64)}…"): names are cut to ${MAX_NAME_LENGTH} characters, as metric attributes.`,
    );
    name = cutName(computation);
  } else name = computation;
  recorder.computationHint = name;
  try {
    if (prefix === undefined) recorder.transition(key, from, to, at as number | undefined, error);
    else
      withPrefix(recorder, "transition()", prefix, () =>
        recorder.transition(key, from, to, at as number | undefined, error),
      );
  } finally {
    recorder.computationHint = undefined;
  }
}

/** execute() given options, or the deprecated positional `at`. */
export function executeWith(recorder: Recorder, key: Key, options: unknown): ExecutionLedger | NoLedger {
  if (!isCallOptions(options, EXECUTE_OPTIONS)) {
    recorder.failures.deprecated("execute(key, at)", "execute(key, { at })");
    return recorder.execute(key, options as number);
  }
  let at: unknown, prefix: unknown;
  try {
    ({ at, prefix } = options);
  } catch {
    recorder.drop("invalid-options", "execute() given options that threw when read; recorded as if given none");
    return recorder.execute(key, undefined);
  }
  if (prefix === undefined) return recorder.execute(key, at as number | undefined);
  return withPrefix(recorder, "execute()", prefix, () => recorder.execute(key, at as number | undefined));
}

/** gather() given options, or the deprecated positional `bytes, at`. */
export function gatherWith(
  recorder: Recorder,
  peer: string,
  keys: readonly Key[],
  options: unknown,
  legacyAt: number | undefined,
): TransferLedger | NoLedger {
  if (legacyAt !== undefined || !isCallOptions(options, GATHER_OPTIONS)) {
    recorder.failures.deprecated("gather(peer, keys, bytes, at)", "gather(peer, keys, { bytes, at })");
    return recorder.gather(peer, keys, options as number | undefined, legacyAt);
  }
  let bytes: unknown, at: unknown;
  try {
    ({ bytes, at } = options);
  } catch {
    recorder.drop("invalid-options", "gather() given options that threw when read; recorded as if given none");
    return recorder.gather(peer, keys, undefined, undefined);
  }
  return recorder.gather(peer, keys, bytes as number | undefined, at as number | undefined);
}
