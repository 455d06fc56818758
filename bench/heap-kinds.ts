/**
 * What a heap holds, by kind of object, and what one heap holds more than another: the live heap
 * a full garbage collection marks, from V8 heap snapshots (bench/cluster-replay.ts writes them with
 * TASKJOURNEY_REPLAY_SNAPSHOT=<n>).
 *
 *   npx tsx bench/heap-kinds.ts <base.heapsnapshot> [<other.heapsnapshot>] [--top 30]
 *
 * A kind is the node's type and name as the snapshot has them ("object Map", "code (bytecode)",
 * "closure emit", "string"); strings and numbers are one kind each whatever their text. With two
 * snapshots it lists the kinds by how many bytes the second has more than the first.
 * Chrome's DevTools read the same files; this is the comparison they do not print as text.
 */
import fs from "node:fs";
import { parseArgs } from "node:util";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface Kind {
  /** The snapshot's node type ("object", "object shape", "code"...). */
  type: string;
  count: number;
  bytes: number;
}

/** Types whose names are content (a string's text, a number's value) rather than a kind. */
const CONTENT_NAMED = new Set([
  "string",
  "concatenated string",
  "sliced string",
  "number",
  "heap number",
  "bigint",
  "regexp",
]);

export function heapKinds(file: string): Map<string, Kind> {
  const data = JSON.parse(fs.readFileSync(file, "utf8")) as Snapshot;
  const fields = data.snapshot.meta.node_fields;
  const types = data.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const kinds = new Map<string, Kind>();
  for (let i = 0; i < data.nodes.length; i += width) {
    const type = types[data.nodes[i + typeAt]];
    const name = data.strings[data.nodes[i + nameAt]];
    const key = CONTENT_NAMED.has(type) ? type : `${type} ${name.length > 60 ? `${name.slice(0, 57)}...` : name}`;
    const kind = kinds.get(key) ?? { type, count: 0, bytes: 0 };
    kind.count += 1;
    kind.bytes += data.nodes[i + sizeAt];
    kinds.set(key, kind);
  }
  return kinds;
}

/** Kinds summed by type alone ("object", "object shape", "code"...). */
export function byType(kinds: Map<string, Kind>): Map<string, Kind> {
  const types = new Map<string, Kind>();
  for (const { type, count, bytes } of kinds.values()) {
    const sum = types.get(type) ?? { type, count: 0, bytes: 0 };
    sum.count += count;
    sum.bytes += bytes;
    types.set(type, sum);
  }
  return types;
}

function total(kinds: Map<string, Kind>): Kind {
  let count = 0;
  let bytes = 0;
  for (const kind of kinds.values()) {
    count += kind.count;
    bytes += kind.bytes;
  }
  return { type: "", count, bytes };
}

/** A value, or with a base its difference from it, signed. */
function shown(value: number, base: number | undefined): string {
  if (base === undefined) return `${value}`;
  const difference = value - base;
  return `${difference > 0 ? "+" : ""}${difference}`;
}

function table(title: string, rows: [string, Kind, Kind | undefined][], top: number): void {
  console.log(`\n${title}`);
  for (const [key, kind, base] of rows.slice(0, top)) {
    console.log(
      `${shown(kind.bytes, base?.bytes).padStart(11)} B ${shown(kind.count, base?.count).padStart(8)}  ${key}`,
    );
  }
}

function ordered(kinds: Map<string, Kind>, base: Map<string, Kind> | undefined): [string, Kind, Kind | undefined][] {
  const keys = new Set([...kinds.keys(), ...(base?.keys() ?? [])]);
  const rows: [string, Kind, Kind | undefined][] = [...keys].map((key) => [
    key,
    kinds.get(key) ?? { type: "", count: 0, bytes: 0 },
    base === undefined ? undefined : (base.get(key) ?? { type: "", count: 0, bytes: 0 }),
  ]);
  const weight = ([, kind, from]: [string, Kind, Kind | undefined]) => kind.bytes - (from?.bytes ?? 0);
  return rows.sort((a, b) => weight(b) - weight(a));
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: "string", default: "30" } },
  });
  const top = Number(values.top);
  if (positionals.length < 1 || positionals.length > 2 || !(top > 0)) {
    console.error("usage: heap-kinds <base.heapsnapshot> [<other.heapsnapshot>] [--top 30]");
    process.exit(2);
  }
  const base = heapKinds(positionals[0]);
  const other = positionals[1] === undefined ? undefined : heapKinds(positionals[1]);
  const heap = other ?? base;
  const against = other === undefined ? undefined : base;
  const sum = total(heap);
  const from = against === undefined ? undefined : total(against);
  console.log(
    from === undefined
      ? `${sum.bytes} B in ${sum.count} objects`
      : `${sum.bytes} B in ${sum.count} objects, ${sum.bytes - from.bytes} B and ${sum.count - from.count} objects more than the first`,
  );
  table("by type", ordered(byType(heap), against && byType(against)), top);
  table("by kind", ordered(heap, against), top);
}

if (/heap-kinds\.ts$/.test(process.argv[1] ?? "")) main();
