/**
 * Splits a callgrind profile of node into the parts of the runtime that spent its instructions:
 * V8's optimizing compilers, parsing and bytecode, garbage collection, the write barrier, V8's
 * builtins, JIT-compiled JavaScript, the rest of V8, Node.js and libuv, malloc, and everything
 * else (libc, zlib, OpenSSL). Self instructions by function, from `callgrind_annotate`, classified by
 * the function's symbol. JIT code has no symbol (callgrind sees anonymous addresses), which is
 * what tells it apart.
 *
 * Why by symbol and not by thread: with `node --predictable` everything runs on the main thread,
 * the compilers included, so a thread split would not separate them.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";

export const PARTS = [
  "optimizing compilers",
  "parsing and bytecode",
  "garbage collection",
  "write barrier",
  "V8 builtins",
  "JIT-compiled JavaScript",
  "rest of V8",
  "Node.js and libuv",
  "malloc and free",
  "other (libc, zlib, OpenSSL)",
] as const;
export type Part = (typeof PARTS)[number];

const RULES: ReadonlyArray<[RegExp, Part]> = [
  [/v8::internal::(compiler|maglev|turboshaft)::|OptimizingCompileDispatcher|Turbofan|Maglev/, "optimizing compilers"],
  [
    /v8::internal::(Parser|PreParser|ParserBase|Scanner|Utf8ExternalStreamingStream|interpreter::|baseline::|AstValueFactory|AstNodeFactory|Scope::|DeclarationScope|ClassScope|Compiler::|BackgroundCompileTask|UnoptimizedCompil|FuncNameInferrer)/,
    "parsing and bytecode",
  ],
  [/Builtins_RecordWrite|Builtins_EphemeronKeyBarrier/, "write barrier"],
  [
    /v8::internal::(Heap|Scavenger|ScavengerCollector|MarkCompactCollector|MinorMarkSweep|MinorMarkCompact|ConcurrentMarking|Sweeper|IncrementalMarking|MarkingBarrier|MarkingWorklists|Evacuat|RememberedSet|SlotSet|TypedSlot|PagedSpace|SemiSpace|NewSpace|LargeObjectSpace|MemoryAllocator|MemoryChunk|GCTracer|ArrayBufferSweeper|LocalHeap|GlobalHandles|RootMarkingVisitor|YoungGenerationMarking|MainMarkingVisitor|ConcurrentMarkingVisitor|MarkingVisitorBase|PretenuringHandler|Page::|FreeList|ObjectStartBitmap)|cppgc::|heap::base::/,
    "garbage collection",
  ],
  [/^Builtins_/, "V8 builtins"],
  [/^0x[0-9a-f]+$/, "JIT-compiled JavaScript"],
  // Zones (v8::internal::Zone) serve the parser and the optimizing compilers alike: counted here.
  [/v8::|V8_Fatal|Runtime_/, "rest of V8"],
  [/node::|^uv_|^uv__|napi_/, "Node.js and libuv"],
  // The compilers' zones and V8's backing stores allocate through malloc too: not told apart here.
  [
    /^(_int_malloc|_int_free|_int_realloc|malloc|free|realloc|calloc|malloc_consolidate|unlink_chunk|tcache_\w+|cfree)(@.*)?$/,
    "malloc and free",
  ],
];

/** The part a function's symbol belongs to. */
export function partOf(symbol: string): Part {
  // By the qualified name only: parameter types name other namespaces (node::fs::Read(v8::…)).
  const open = symbol.indexOf("(");
  const name = open > 0 ? symbol.slice(0, open) : symbol;
  for (const [pattern, part] of RULES) if (pattern.test(name)) return part;
  return "other (libc, zlib, OpenSSL)";
}

/**
 * Self instructions by function symbol in one callgrind output file; JIT code, having no symbols,
 * as one, or with `perfMap` (V8's /tmp/perf-<pid>.map of that run, `node --perf-basic-prof`) by
 * the JavaScript function its address falls in, "JS " and V8's name for it (an address in no
 * entry stays JIT_CODE).
 */
export function selfBySymbol(outFile: string, perfMap?: string): Map<string, number> {
  const jitName = perfMap === undefined ? () => JIT_CODE : perfMapLookup(perfMap);
  const run = spawnSync(
    "callgrind_annotate",
    ["--inclusive=no", "--threshold=100", "--show=Ir", "--sort=Ir", outFile],
    {
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  if (run.status !== 0) throw new Error(`callgrind_annotate ${outFile} failed (exit ${run.status}): ${run.stderr}`);
  const bySymbol = new Map<string, number>();
  // "  48,263,823 ( 7.59%)  ???:0x000000000d04595b [???]": count, share, file:function [object]
  // (--show=Ir: one count a line, whatever else --cache-sim collected)
  const line = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+([^:]*):(.*?)(?: \[[^\]]*\])?$/;
  for (const text of run.stdout.split("\n")) {
    const match = line.exec(text);
    if (match === null || match[2] === "PROGRAM TOTALS") continue;
    const found = match[3].trim();
    // A JIT function's address differs from run to run: they are compared as one.
    const symbol = partOf(found) === "JIT-compiled JavaScript" ? jitName(found) : found;
    bySymbol.set(symbol, (bySymbol.get(symbol) ?? 0) + Number(match[1].replaceAll(",", "")));
  }
  return bySymbol;
}

/** A function naming a JIT code address ("0x…") by the perf map's entry that holds it. */
function perfMapLookup(file: string): (address: string) => string {
  const entries: Array<[number, number, string]> = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (match !== null) entries.push([parseInt(match[1], 16), parseInt(match[2], 16), match[3]]);
  }
  // Code moved or collected leaves stale entries: the newest entry holding an address wins.
  const order = entries.map((_, index) => index).sort((a, b) => entries[a][0] - entries[b][0] || b - a);
  return (address) => {
    const at = parseInt(address, 16);
    let low = 0;
    let high = order.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (entries[order[middle]][0] <= at) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    for (let index = found; index >= 0 && index > found - 64; index--) {
      const [start, size, name] = entries[order[index]];
      if (at < start + size) return `JS ${name}`;
    }
    return JIT_CODE;
  };
}

/** What selfBySymbol() calls all JIT-compiled code together. */
export const JIT_CODE = "(JIT-compiled JavaScript, all addresses)";

/** Self instructions by part, from selfBySymbol()'s counts. */
export function partsOf(bySymbol: ReadonlyMap<string, number>): Record<Part, number> {
  const totals = Object.fromEntries(PARTS.map((part) => [part, 0])) as Record<Part, number>;
  for (const [symbol, count] of bySymbol) {
    totals[symbol === JIT_CODE || symbol.startsWith("JS ") ? "JIT-compiled JavaScript" : partOf(symbol)] += count;
  }
  return totals;
}
