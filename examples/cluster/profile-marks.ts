/**
 * Marks for the cluster bench's CPU profiles (`bench/cluster.bench.ts --profile`): with
 * `TASKJOURNEY_CLUSTER_MARKS=<dir>` every process appends the time of each CPU reading the
 * scheduler takes (before and after each round) to `<dir>/marks-<pid>.txt`, in µs of
 * CLOCK_MONOTONIC, the clock of `--cpu-prof`'s samples. The bench cuts each process's profile to
 * the measured round with them. Unset (the demo, the tests), `profileMark()` does nothing.
 */
import fs from "node:fs";
import path from "node:path";

const dir = process.env.TASKJOURNEY_CLUSTER_MARKS;
const file = dir === undefined || dir === "" ? undefined : path.join(dir, `marks-${process.pid}.txt`);

/** Records now as a mark of this process, when marks are asked for. */
export function profileMark(): void {
  if (file !== undefined) fs.appendFileSync(file, `${process.hrtime.bigint() / 1000n}\n`);
}
