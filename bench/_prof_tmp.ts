import { TaskJourneys, DEFAULT_OPTIONS } from "../dist/index.js";
import { keyPool, prefixNames, workerJourney } from "./workload.js";
const names = prefixNames(100);
const keys = keyPool(1 << 16, names, 1);
const inflight = keyPool(1000, names, 3);
const j = new TaskJourneys({ role: "worker", sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false }, prefixLimit: 100, clock: DEFAULT_OPTIONS.clock });
for (const k of inflight) j.transition(k, "released", "waiting");
const N = Number(process.argv[2] ?? 3_000_000);
for (let r = 0; r < 3; r++) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) workerJourney(j as any, keys[i & 65535]);
  const c1 = process.cpuUsage(c0);
  console.log("cpu ns/journey", ((c1.user + c1.system) * 1000 / N).toFixed(0));
}
