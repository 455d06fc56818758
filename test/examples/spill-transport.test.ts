import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskJourneys, instrument } from "../../src/index.js";
import { SPILL_ACTIVITIES, SpillBuffer } from "../../examples/cluster/spill.js";
import { ConnectionPool, listen, type Connection } from "../../examples/cluster/transport.js";

const directories: string[] = [];
const closers: Array<() => void> = [];
afterEach(() => {
  closers.splice(0).forEach((close) => close());
  for (const directory of directories.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
});

function store(limit: number): SpillBuffer {
  const directory = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-spill-test-")), "store");
  directories.push(path.dirname(directory));
  return new SpillBuffer(limit, directory);
}

const array = (fill: number, length = 128) => new Float64Array(length).fill(fill);

describe("the spill buffer", () => {
  it("spills the least recently used values beyond its limit and unspills them on use", () => {
    const buffer = store(2048);
    buffer.set("a", array(1), 1024);
    buffer.set("b", array(2), 1024);
    expect(buffer.get("a")).toEqual(array(1)); // a is now the most recently used
    buffer.set("c", array(3), 1024);
    expect(buffer.counters).toMatchObject({ spilled: 1, unspilled: 0 });
    expect(buffer.spilledKeys).toBe(1);
    expect(fs.readdirSync(buffer.directory)).toHaveLength(1);
    expect(buffer.get("b")).toEqual(array(2)); // b was spilled; reading it spills a
    expect(buffer.counters).toMatchObject({ spilled: 2, unspilled: 1 });
    expect(buffer.memoryBytes).toBe(2048);
    expect(buffer.serialized("a")).toBeInstanceOf(Buffer); // served from its file, not unspilled
    expect(buffer.counters.servedFromDisk).toBe(1);
    expect(buffer.spilledKeys).toBe(1);
    buffer.delete("a");
    expect(fs.readdirSync(buffer.directory)).toHaveLength(0);
    buffer.close();
    expect(fs.existsSync(buffer.directory)).toBe(false);
  });

  it("spills a value larger than the whole limit straight away", () => {
    const buffer = store(100);
    buffer.set("big", array(5), 1024);
    expect(buffer.memoryBytes).toBe(0);
    expect(buffer.get("big")).toEqual(array(5));
  });

  it("charges spills and unspills to the surrounding execution when instrumented", () => {
    const journeys = new TaskJourneys({ role: "worker", sampling: { ratio: 0 } });
    const buffer = store(1024);
    instrument(buffer, journeys, {
      activities: SPILL_ACTIVITIES,
    });
    buffer.set("a", array(1), 1024);
    buffer.set("b", array(2), 1024); // spills a outside any execution: nothing recorded
    journeys.transition("x-1", "released", "waiting");
    journeys.transition("x-1", "waiting", "ready");
    const ledger = journeys.execute("x-1");
    ledger.run(() => buffer.get("a")); // unspills a, spills b
    ledger.end("memory");
    const executing = journeys.explain("x-1")!.children.find((node) => node.name === "executing")!;
    const names = (name: string) =>
      executing.children
        .find((node) => node.name === name)
        ?.children.map((child) => child.name)
        .sort();
    expect(names("unspill")).toEqual(expect.arrayContaining(["deserialize", "disk-read"]));
    expect(names("spill")).toEqual(expect.arrayContaining(["disk-write", "serialize"]));
  });
});

describe("the transport", () => {
  it("frames messages of any size, pairs replies with requests, and reuses pooled connections", async () => {
    const seen: string[] = [];
    const { server, address } = await listen((connection: Connection) => {
      connection.onMessage = (message) => {
        seen.push(message.op);
        connection.reply(message, { op: "echo", data: message.data, size: (message.data as Uint8Array).byteLength });
      };
    });
    const pool = new ConnectionPool();
    closers.push(() => {
      pool.closeAll();
      server.close();
    });
    const big = new Uint8Array(3_000_000).map((_, i) => i % 251);
    const connection = await pool.acquire(address);
    const [small, large] = await Promise.all([
      connection.request({ op: "small", data: new Uint8Array([1, 2, 3]) }),
      connection.request({ op: "large", data: big }),
    ]);
    expect(small.size).toBe(3);
    expect(large.size).toBe(3_000_000);
    expect(Buffer.from(large.data as Uint8Array).equals(Buffer.from(big))).toBe(true);
    pool.release(address, connection);
    expect(await pool.acquire(address)).toBe(connection);
    expect({ opened: pool.opened, reused: pool.reused }).toEqual({ opened: 1, reused: 1 });
    expect(seen).toEqual(["small", "large"]);
    connection.destroy();
    await expect(connection.request({ op: "late" })).rejects.toThrow(/closed/);
  });
});
