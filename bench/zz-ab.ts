import { TaskJourneys, instrument } from "../src/index.js";
const KEYS = Array.from({ length: 4096 }, (_, i) => `inc-${i.toString(16).padStart(4, "0")}x`);
class Worker {
  async execute(key: string): Promise<string> { return key; }
  executeSync(key: string): string { return key; }
}
const mk = () => new TaskJourneys({ role: "worker", instance: "b", sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false } });
const plain = new Worker(), wrapped = new Worker(), hand = new Worker();
const jw = mk(), jh = mk();
instrument(wrapped, jw, { execute: [{ method: "execute", key: (k) => k }, { method: "executeSync", key: (k) => k }] });
let n = 0; const key = () => KEYS[(n = (n + 1) & 4095)];
const variants: Record<string, () => unknown> = {
  plainSync: () => plain.executeSync(key()),
  wrappedSync: () => wrapped.executeSync(key()),
  handSync: () => { const k = key(); const l = jh.execute(k); const v = l.run(() => hand.executeSync(k)); l.end("memory"); return v; },
};
const asyncVariants: Record<string, () => Promise<unknown>> = {
  plainAsync: async () => plain.execute(key()),
  wrappedAsync: async () => wrapped.execute(key()),
  handAsync: async () => { const k = key(); const l = jh.execute(k); const v = await l.run(() => hand.execute(k)); l.end("memory"); return v; },
};
const B = 2000;
const res: Record<string, number[]> = {};
for (let round = 0; round < 300; round++) {
  for (const [name, fn] of Object.entries(variants)) {
    const t0 = performance.now();
    for (let i = 0; i < B; i++) fn();
    (res[name] ??= []).push(((performance.now() - t0) * 1e6) / B);
  }
  for (const [name, fn] of Object.entries(asyncVariants)) {
    const t0 = performance.now();
    for (let i = 0; i < B; i++) await fn();
    (res[name] ??= []).push(((performance.now() - t0) * 1e6) / B);
  }
}
for (const [name, xs] of Object.entries(res)) {
  xs.sort((a, b) => a - b);
  console.log(name.padEnd(14), "min", xs[0].toFixed(0), "p10", xs[Math.floor(xs.length * 0.1)].toFixed(0), "p50", xs[Math.floor(xs.length / 2)].toFixed(0));
}
