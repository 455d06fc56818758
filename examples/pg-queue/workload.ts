/**
 * What the example's queue carries: four queues of jobs, each job's work, and which of them fail.
 * Deterministic, so that a test can count: 10 `resize` jobs that succeed; 4 `upload` jobs whose
 * first attempt fails (the storage hung up) and whose retry succeeds; 3 `transcode` jobs that fail
 * every attempt, for good after two retries; 3 `report` jobs sent to start a second later.
 * Retries back off: pg-boss waits 1–2 s before a job's first retry, 2–4 s before its second.
 */
import { createHash } from "node:crypto";

export interface PlannedJob {
  /** The producer's key of the job (its journey there): the queue's id exists only once it is sent. */
  key: string;
  queue: string;
  /** Seconds from the send until the job may start (pg-boss `startAfter`); 0: at once. */
  startAfter: number;
  /** How many times pg-boss retries it when it fails (with backoff, from `retryDelay` 1 s). */
  retryLimit: number;
}

export const QUEUES = ["resize", "upload", "transcode", "report"] as const;

export function plan(): PlannedJob[] {
  const jobs: PlannedJob[] = [];
  const add = (queue: string, count: number, startAfter: number, retryLimit: number) => {
    for (let i = 0; i < count; i++) jobs.push({ key: `${queue}-${i}`, queue, startAfter, retryLimit });
  };
  add("resize", 10, 0, 2);
  add("upload", 4, 0, 2);
  add("transcode", 3, 0, 2);
  add("report", 3, 1, 2);
  return jobs;
}

export interface JobData {
  key: string;
  file: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** CPU work of about `ms` milliseconds: hashing. */
function hashFor(ms: number): string {
  const end = performance.now() + ms;
  let digest = "";
  while (performance.now() < end) digest = createHash("sha256").update(digest).digest("hex");
  return digest;
}

/**
 * A job's work, in steps the worker meters as activities (`meter(name, step)`); throws the job's
 * failure, with its reason.
 */
export async function work(
  queue: string,
  data: JobData,
  attempt: number,
  meter: <T>(activity: string, step: () => T | Promise<T>) => Promise<T>,
): Promise<string> {
  switch (queue) {
    case "resize": {
      await meter("read-source", () => sleep(5));
      const digest = await meter("encode", () => hashFor(3));
      await meter("write-result", () => sleep(2));
      return digest.slice(0, 8);
    }
    case "upload":
      await meter("upload", () => sleep(10));
      if (attempt === 1) throw new Error(`ECONNRESET: storage closed the connection while uploading ${data.file}`);
      return "uploaded";
    case "transcode":
      await meter("probe", () => sleep(3));
      throw new Error(`unsupported codec "vp7" in ${data.file}`);
    case "report":
      return await meter("render", () => hashFor(2));
    default:
      throw new Error(`no work for queue ${queue}`);
  }
}
