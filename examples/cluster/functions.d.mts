/** Types of functions.mjs (plain JavaScript, so that worker threads load it without a TypeScript loader). */

/** A task's value: numeric arrays, lists of them (a shuffle's split), or a number. */
export type Value = Float64Array | Float64Array[] | number;

/** What a seceding function calls when it stops counting against the thread pool. */
export interface TaskContext {
  secede(): void;
}

export type TaskFunction = (...args: any[]) => Value;

export declare const FUNCTIONS: Readonly<Record<string, TaskFunction>>;
/** Functions that take a TaskContext as their last argument (they may secede). */
export declare const SECEDING: ReadonlySet<string>;
/** Size in memory of a value, as a worker accounts for it. */
export declare function sizeOf(value: unknown): number;
