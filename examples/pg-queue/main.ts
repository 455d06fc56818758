/**
 * The PostgreSQL queue example: a producer process sends jobs through pg-boss, two worker
 * processes run them (retries with backoff, permanent failures, delayed jobs), each process with
 * its own NodeSDK and taskjourney's journeys. This process only orchestrates (it records nothing):
 * it makes the queues, forks the workers and the producer, waits until every job has ended in the
 * database, stops the workers, and prints each job's row as JSON.
 *
 *   npx tsx examples/pg-queue/main.ts --database postgres://user@host/db [--out dir] [--ratio 0.01] [--schema pgboss]
 *
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, every process exports there; otherwise to OTLP/JSON files
 * in <out>/otlp/, which `npx taskjourney report <out>/otlp` reads. OTEL_SERVICE_NAME names the
 * service (default pg-queue).
 */
import { fork, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import PgBoss from "pg-boss";
import { QUEUES } from "./workload.js";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: process.env.DATABASE_URL },
    out: { type: "string", default: "pg-queue-out" },
    ratio: { type: "string", default: "0.01" },
    schema: { type: "string", default: "pgboss" },
    timeout: { type: "string", default: "60" },
  },
});
if (values.database === undefined) throw new Error("--database postgres://… (or DATABASE_URL) is required");
const database = values.database;
const schema = values.schema;
const deadline = Date.now() + Number(values.timeout) * 1000;

const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const env = { ...process.env, OTEL_SERVICE_NAME: process.env.OTEL_SERVICE_NAME ?? "pg-queue" };

/** Forks `script` with the common arguments; its stderr lines go to ours, each named by the process. */
function start(script: string, instance: string): ChildProcess {
  const child = fork(new URL(script, import.meta.url), [database, schema, instance, values.ratio, values.out], {
    execArgv: ["--import", tsx],
    env,
    stdio: ["ignore", "inherit", "pipe", "ipc"],
  });
  let partial = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    const lines = (partial + text).split("\n");
    partial = lines.pop()!;
    for (const line of lines) process.stderr.write(`[${instance}] ${line}\n`);
  });
  child.stderr!.on("end", () => partial && process.stderr.write(`[${instance}] ${partial}\n`));
  return child;
}

function exited(child: ChildProcess, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null)
      return child.exitCode === 0 ? resolve() : reject(new Error(`${name} exited ${child.exitCode}`));
    child.once("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${name} exited ${signal ?? code}`)),
    );
  });
}

const within = <T>(what: string, promise: Promise<T>): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`pg-queue: ${what} not done within --timeout`)),
        Math.max(0, deadline - Date.now()),
      ).unref(),
    ),
  ]);

// The queues, once: workers take from them, the producer sends to them.
const boss = new PgBoss({ connectionString: database, schema, supervise: false, schedule: false });
boss.on("error", (error) => console.error(`main: pg-boss: ${error.message}`));
await boss.start();
for (const queue of QUEUES) if ((await boss.getQueue(queue)) === null) await boss.createQueue(queue);

const workers = ["worker-1", "worker-2"].map((instance) => ({ instance, child: start("./worker.ts", instance) }));
try {
  await within(
    "the workers' start",
    Promise.all(workers.map(({ child }) => new Promise<void>((resolve) => child.once("message", () => resolve())))),
  );
  await within("the producer", exited(start("./producer.ts", "producer-1"), "producer-1"));
  // The producer never hears how its jobs end; this process asks the database until none is left to run.
  for (;;) {
    const { rows } = await boss
      .getDb()
      .executeSql(`SELECT count(*)::int AS n FROM ${schema}.job WHERE state < 'completed'`, []);
    if (rows[0].n === 0) break;
    if (Date.now() > deadline) throw new Error(`pg-queue: ${rows[0].n} jobs still not ended within --timeout`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
} finally {
  for (const { child } of workers) if (child.connected) child.send("stop");
  await within("the workers' stop", Promise.all(workers.map(({ child, instance }) => exited(child, instance)))).catch(
    (error: Error) => {
      for (const { child } of workers) child.kill("SIGKILL");
      throw error;
    },
  );
}

const { rows } = await boss.getDb().executeSql(
  `SELECT id, name, state, retry_count AS "retryCount", data->>'key' AS key, output
     FROM ${schema}.job ORDER BY name, data->>'key'`,
  [],
);
await boss.stop({ graceful: false, wait: true });
process.stdout.write(JSON.stringify(rows) + "\n");
