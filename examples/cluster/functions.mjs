// @ts-check
/**
 * The task functions of the example workloads: plain numeric array code, no I/O and no
 * telemetry. Worker threads run them (tasks.mjs); tests run them in-process to compute the
 * expected result of a graph.
 *
 * Plain JavaScript on purpose: piscina's threads load it without a TypeScript loader, which
 * starts a thread in milliseconds instead of the second or so tsx takes per thread. Types for
 * TypeScript importers are in functions.d.mts.
 */

/** Deterministic pseudo-random numbers in [0, 1) from (stream, index): a 32-bit hash. */
function unit(/** @type {number} */ stream, /** @type {number} */ index) {
  let h = Math.imul(stream ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/** Values of partition `i`: `length` numbers in [0, 1). */
function arange(/** @type {number} */ i, /** @type {number} */ length, /** @type {number} */ seed) {
  const out = new Float64Array(length);
  const stream = (seed * 1000003 + i) | 0;
  for (let k = 0; k < length; k++) out[k] = unit(stream, k);
  return out;
}

/** x², then `passes` rounds of a cheap smoothing so the task has some CPU to it. */
function square(/** @type {Float64Array} */ x, /** @type {number} */ passes) {
  const out = new Float64Array(x.length);
  for (let k = 0; k < x.length; k++) out[k] = x[k] * x[k];
  for (let pass = 0; pass < passes; pass++) {
    for (let k = 1; k < out.length - 1; k++) out[k] = Math.sqrt(out[k] * out[k] + 1e-12) * 0.5 + out[k] * 0.5;
  }
  return out;
}

/** Elementwise sum, in argument order. */
function add(/** @type {Float64Array[]} */ ...arrays) {
  const out = new Float64Array(arrays[0].length);
  for (const array of arrays) for (let k = 0; k < out.length; k++) out[k] += array[k];
  return out;
}

/** The sum of all elements. */
function total(/** @type {Float64Array} */ x) {
  let sum = 0;
  for (let k = 0; k < x.length; k++) sum += x[k];
  return sum;
}

/** Splits `x` into `n` groups by value range: group j holds the values in [j/n, (j+1)/n). */
function split(/** @type {Float64Array} */ x, /** @type {number} */ n) {
  const counts = new Uint32Array(n);
  for (let k = 0; k < x.length; k++) counts[Math.min(n - 1, Math.floor(x[k] * n))]++;
  const groups = Array.from(counts, (count) => new Float64Array(count));
  const filled = new Uint32Array(n);
  for (let k = 0; k < x.length; k++) {
    const j = Math.min(n - 1, Math.floor(x[k] * n));
    groups[j][filled[j]++] = x[k];
  }
  return groups;
}

function getitem(/** @type {Float64Array[]} */ groups, /** @type {number} */ j) {
  return groups[j];
}

/** Concatenates and sorts: one output partition of the shuffle. */
function merge(/** @type {Float64Array[]} */ ...parts) {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Float64Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out.sort();
}

/** [count, sum, sortedness violations] of all output partitions, in order. */
function checksum(/** @type {Float64Array[]} */ ...parts) {
  let count = 0;
  let sum = 0;
  let unsorted = 0;
  let previous = -Infinity;
  for (const part of parts) {
    for (let k = 0; k < part.length; k++) {
      if (part[k] < previous) unsorted++;
      previous = part[k];
      sum += part[k];
    }
    count += part.length;
  }
  return Float64Array.of(count, sum, unsorted);
}

/** CPU work of `iterations` steps (the skewed workload sizes it from a lognormal draw). */
function work(/** @type {number} */ i, /** @type {number} */ iterations) {
  let x = i + 1;
  for (let step = 0; step < iterations; step++) x = (x * 1.000000119 + 0.5) % 1048576;
  return Float64Array.of(x, iterations);
}

/** Waits `milliseconds` for something outside (an I/O stand-in), after seceding from the pool. */
function poll(
  /** @type {number} */ i,
  /** @type {number} */ milliseconds,
  /** @type {{ secede(): void } | undefined} */ context,
) {
  context?.secede();
  const cell = new Int32Array(new SharedArrayBuffer(4));
  Atomics.wait(cell, 0, 0, milliseconds);
  return Float64Array.of(i, milliseconds);
}

/** Sums the first element of each input: the skewed workload's reduction. */
function collect(/** @type {Float64Array[]} */ ...parts) {
  let sum = 0;
  for (const part of parts) sum += part[0];
  return Float64Array.of(sum, parts.length);
}

/**
 * Holds its thread for `milliseconds`, then computes `func` of `args`: a slow task (the demo's
 * --slow-every), slow in the way a task stuck on a lock or a slow library call is.
 */
function slow(/** @type {number} */ milliseconds, /** @type {string} */ func, /** @type {unknown[]} */ ...args) {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  Atomics.wait(cell, 0, 0, milliseconds);
  return /** @type {(...args: unknown[]) => unknown} */ (FUNCTIONS[/** @type {keyof typeof FUNCTIONS} */ (func)])(
    ...args,
  );
}

/**
 * Computes `func` of `args`. The worker's main thread forces a major GC as it starts the task
 * (the demo's --gc-every, worker.ts): a task slowed by its process's GC pause, not by its code.
 */
function majorGc(/** @type {string} */ func, /** @type {unknown[]} */ ...args) {
  return /** @type {(...args: unknown[]) => unknown} */ (FUNCTIONS[/** @type {keyof typeof FUNCTIONS} */ (func)])(
    ...args,
  );
}

/**
 * Computes `func` of `args`. The worker's main thread blocks its event loop for `milliseconds`
 * as it starts the task (the demo's --block-every, worker.ts): a task slowed by a blocked loop.
 */
function blockLoop(/** @type {number} */ milliseconds, /** @type {string} */ func, /** @type {unknown[]} */ ...args) {
  return /** @type {(...args: unknown[]) => unknown} */ (FUNCTIONS[/** @type {keyof typeof FUNCTIONS} */ (func)])(
    ...args,
  );
}

/** Raises instead of computing `func`: a failing task (the demo's --fail-every). */
function fail(/** @type {string} */ func) {
  throw new Error(`injected failure of a ${func} task (--fail-every)`);
}

export const FUNCTIONS = Object.freeze({
  arange,
  square,
  add,
  total,
  split,
  getitem,
  merge,
  checksum,
  work,
  poll,
  collect,
  slow,
  fail,
  majorGc,
  blockLoop,
});

/** Functions that take a TaskContext as their last argument (they may secede). */
export const SECEDING = new Set(["poll"]);

/** Size in memory of a value, as a worker accounts for it. */
export function sizeOf(/** @type {unknown} */ value) {
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (Array.isArray(value)) return value.reduce((/** @type {number} */ sum, item) => sum + sizeOf(item), 16);
  return 8;
}
