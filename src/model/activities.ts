/**
 * Activity names in the style of Dask's fine performance metrics. Users may meter activities of
 * their own; these are the ones taskjourney itself speaks of.
 */

export const EXECUTE_ACTIVITIES = [
  "deserialize",
  "disk-read",
  "decompress",
  "thread-cpu",
  "thread-noncpu",
  "executor",
  "seceded",
  "serialize",
  "compress",
  "disk-write",
  "other",
] as const;

export const GATHER_ACTIVITIES = [
  "connect",
  "network",
  "decompress",
  "deserialize",
  "serialize",
  "compress",
  "disk-write",
  "other",
] as const;

/**
 * The digests of a thread's own times during an execution: measurements over one interval, not
 * slices of it (spans carry them as thread.cpu_time / thread.noncpu_time).
 */
export const THREAD_CPU_ACTIVITY = "thread-cpu";
export const THREAD_NONCPU_ACTIVITY = "thread-noncpu";
/** The gather activity whose digested bytes are the transfer's size (`transfer.bytes`, `task.gather.size`). */
export const NETWORK_ACTIVITY = "network";
/** The remainder of a state's wall time that no metered activity claimed. */
export const OTHER_ACTIVITY = "other";
/** Waiting time not covered by any fetch of a dependency: dependencies computing, scheduling. */
export const DEPENDENCIES_ACTIVITY = "dependencies";
/** Time a dependency spent in `fetch` before its flight. */
export const QUEUED_ACTIVITY = "queued";

export const EXECUTE_OUTCOMES = ["memory", "error", "cancelled"] as const;
export type ExecuteOutcome = (typeof EXECUTE_OUTCOMES)[number];

export const TRANSFER_OUTCOMES = ["ok", "busy", "missing", "failed", "cancelled"] as const;
export type TransferOutcome = (typeof TRANSFER_OUTCOMES)[number];

/**
 * Like Dask, an execution or transfer that did not succeed reports its whole wall time under one
 * lump activity instead of its detailed activities: a failed task's `thread-cpu` is not useful
 * work and must not inflate the breakdown of useful work.
 */
export const EXECUTE_LUMP: Readonly<Record<ExecuteOutcome, string | undefined>> = {
  memory: undefined,
  error: "failed",
  cancelled: "cancelled",
};

export const TRANSFER_LUMP: Readonly<Record<TransferOutcome, string | undefined>> = {
  ok: undefined,
  busy: "busy",
  missing: "missing",
  failed: "failed",
  cancelled: "cancelled",
};

/**
 * The quantity units execute ledgers aggregate into metrics (`task.execute.size` in bytes,
 * `task.execute.count`); a digest in another unit is kept for `explain()` and spans only.
 */
export const QUANTITY_UNITS = ["bytes", "count"] as const;
