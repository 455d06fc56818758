import { describe, expect, it } from "vitest";
import { partOf } from "../../bench/callgrind-parts.js";

// Symbols as callgrind_annotate prints them for node 20 and 24 (demangled, with parameters).
describe("callgrind parts", () => {
  it.each([
    ["v8::internal::compiler::PipelineImpl::OptimizeGraph(v8::internal::compiler::Linkage*)", "optimizing compilers"],
    ["v8::internal::maglev::MaglevGraphBuilder::VisitLdaNamedProperty()", "optimizing compilers"],
    ["v8::internal::interpreter::BytecodeGenerator::VisitCall(v8::internal::Call*)", "parsing and bytecode"],
    ["v8::internal::Parser::ParseFunctionLiteral(v8::internal::AstRawString const*)", "parsing and bytecode"],
    ["v8::internal::Scavenger::ScavengePage(v8::internal::MemoryChunk*)", "garbage collection"],
    ["v8::internal::MarkCompactCollector::CollectGarbage()", "garbage collection"],
    ["Builtins_RecordWriteSaveFP", "write barrier"],
    ["Builtins_MapPrototypeSet", "V8 builtins"],
    ["0x000000000d04595b", "JIT-compiled JavaScript"],
    ["v8::internal::Zone::NewExpand(unsigned long)", "rest of V8"],
    ["v8::internal::Runtime_AllocateInYoungGeneration(int, unsigned long*, v8::internal::Isolate*)", "rest of V8"],
    ["node::fs::Read(v8::FunctionCallbackInfo<v8::Value> const&)", "Node.js and libuv"],
    ["uv__io_poll", "Node.js and libuv"],
    ["_int_malloc", "malloc and free"],
    ["pthread_rwlock_unlock@@GLIBC_2.34", "other (libc, zlib, OpenSSL)"],
    ["deflate_slow", "other (libc, zlib, OpenSSL)"],
  ])("%s is %s", (symbol, part) => {
    expect(partOf(symbol)).toBe(part);
  });
});
