import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { isKey, keySplit, keySplitEnd, keySplitGroup, keyToText, type Key } from "../../src/model/keys.js";

// Sources of the expectations below:
//
// - Dask's own examples: the doctests of key_split in dask/utils.py (dask/dask at
//   817e5ffc1208346630b111860571024b0c6ec9bd) and of key_split_group in distributed/utils.py
//   (dask/distributed at 40fcd99a8cd41c39071a16a546e93a9298f1b64d). At those commits neither
//   dask/tests/test_utils.py nor distributed's tests have a test of their own for key_split or
//   key_split_group; the doctests are their tests. dask/tests/test_base.py only checks that
//   clone_key keeps the prefix, which is not our concern.
// - Edge cases: computed by running those two functions, copied verbatim, under CPython 3.11
//   (Unicode 14). Where Dask raises or returns "", we return "Other" by design; those rows
//   are in "deviations" below, each with what Dask does.

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

// U+1D4B3 MATHEMATICAL SCRIPT CAPITAL X: a letter outside the BMP, two UTF-16 units long but
// one character for Python.
const SCRIPT_X = "\u{1D4B3}";

describe("keySplit", () => {
  it("gives the results of the examples in Dask's key_split docstring", () => {
    expect(keySplit("x")).toBe("x");
    expect(keySplit("x-1")).toBe("x");
    expect(keySplit("x-1-2-3")).toBe("x");
    expect(keySplit(["x-2", 1])).toBe("x");
    expect(keySplit("('x-2', 1)")).toBe("x");
    expect(keySplit("('x', 1)")).toBe("x");
    expect(keySplit("hello-world-1")).toBe("hello-world");
    expect(keySplit(bytes("hello-world-1"))).toBe("hello-world");
    expect(keySplit("ae05086432ca935f6eba409a8ecd4896")).toBe("data");
    expect(keySplit("<module.submodule.myclass object at 0xdaf372")).toBe("myclass");
    expect(keySplit(null)).toBe("Other");
    expect(keySplit("x-abcdefab")).toBe("x");
    expect(keySplit("_(x)")).toBe("x");
  });

  it.each<[unknown, string]>([
    // A word is a name word only if it is all letters (str.isalpha): digits stop the name.
    ["task-12345678", "task"],
    ["1-x", "1-x"],
    ["x--y", "x"],
    ["x-", "x"],
    ["x,y-1", "x,y"],
    // The 8-letter token rule: hex_pattern.match("[a-f]+") anchors only at the start, so any
    // 8-letter word starting with a-f counts as a token, and uppercase never does.
    ["x-database", "x"],
    ["x-abcdefgh", "x"],
    ["x-fabulous", "x"],
    ["x-gorgeous", "x-gorgeous"],
    ["x-ABCDEFAB", "x-ABCDEFAB"],
    ["x-zzzzzzzz", "x-zzzzzzzz"],
    ["x-abcdefa", "x-abcdefa"],
    ["x-abcdefabc", "x-abcdefabc"],
    // Python counts characters, not UTF-16 units: "a" + 7 astral letters is 8 long.
    [`x-a${SCRIPT_X.repeat(7)}`, "x"],
    [`x-z${SCRIPT_X.repeat(7)}`, `x-z${SCRIPT_X.repeat(7)}`],
    [`a${SCRIPT_X.repeat(7)}`, `a${SCRIPT_X.repeat(7)}`],
    ["Écoute-été-1", "Écoute-été"],
    // The 32-hex "data" rule applies to the name found, lowercase only.
    ["ae05086432ca935f6eba409a8ecd4896-1", "data"],
    ["x-ae05086432ca935f6eba409a8ecd4896", "x"],
    ["('ae05086432ca935f6eba409a8ecd4896', 0)", "data"],
    ["AE05086432CA935F6EBA409A8ECD4896", "AE05086432CA935F6EBA409A8ECD4896"],
    // A first character that is not a letter: cut at the first comma, strip _'()" around.
    ["(x,y-1", "x"],
    ["_-abc", "-abc"],
    ["('hello-world', 1)", "hello"],
    [["hello-world", 1], "hello-world"],
    // The object-repr rule splits on Python's whitespace, which has 0x1c but not U+FEFF.
    ["<foo.Bar\x1cobject", "Bar"],
    ["<foo.Bar\x85object", "Bar"],
    ["<foo.Bar\u3000object", "Bar"],
    ["<foo.Bar\ufeffobject at 0x1>", "Bar\ufeffobject"],
    // Tuples recurse on their first element; numbers have no name.
    [["x"], "x"],
    [[["a-1", 2], 3], "a"],
    [[bytes("y-1"), 0], "y"],
    [1, "Other"],
    [1.5, "Other"],
    [[1, 2], "Other"],
    // Unusable input.
    ["", "Other"],
    ["-x", "Other"],
    ["_", "Other"],
    ["< >", "Other"],
    [undefined, "Other"],
    [true, "Other"],
    [{}, "Other"],
    [{ key: "x-1" }, "Other"],
    [() => "x-1", "Other"],
    [Symbol("x-1"), "Other"],
    [10n, "Other"],
  ])("keySplit(%o) is %o, as in Dask", (key, prefix) => {
    expect(keySplit(key)).toBe(prefix);
  });

  describe("deviations: Other where Dask raises or returns an empty string", () => {
    it.each<[string, unknown, string]>([
      ["Dask returns '' (the first word ends with '.')", "<x.", "Other"],
      ["Dask returns ''", "<a.b. c", "Other"],
      ["Dask raises IndexError (an empty tuple)", [], "Other"],
      ["Dask raises UnicodeDecodeError", new Uint8Array([0xff]), "Other"],
      ["Dask raises UnicodeDecodeError", new Uint8Array([0x78, 0x2d, 0xc3]), "Other"],
    ])("%s: keySplit(%o) is %o", (_why, key, prefix) => {
      expect(keySplit(key)).toBe(prefix);
    });
  });

  it("treats an array as a tuple (a Python list is unhashable, so key_split raises TypeError)", () => {
    expect(keySplit(["x-2", 1])).toBe("x");
  });

  it("keeps a leading byte-order mark of bytes, as Python's bytes.decode() does", () => {
    const withMark = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes("x-1")]);
    // U+FEFF is not a letter, so the first word takes the non-letter path and keeps it.
    expect(keySplit(withMark)).toBe("\ufeffx");
    expect(keySplit("\ufeffx-1")).toBe("\ufeffx");
  });

  it("gives Other for arrays nested too deep or containing themselves, without throwing", () => {
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(keySplit(cyclic)).toBe("Other");
    let deep: unknown = "x-1";
    for (let i = 0; i < 32; i++) deep = [deep];
    expect(keySplit(deep)).toBe("x");
    expect(keySplit([deep])).toBe("Other");
  });

  it("answers the same for repeated keys, keys that churn the memo, and very long keys", () => {
    const keys = Array.from({ length: 20_000 }, (_, i) =>
      i % 3 === 0 ? `inc-${i.toString(16).padStart(8, "0")}` : i % 3 === 1 ? `sum-aggregate-${i}` : `('x-${i}', ${i})`,
    );
    const expected = keys.map((key) => (key.startsWith("inc") ? "inc" : key.startsWith("sum") ? "sum-aggregate" : "x"));
    for (let round = 0; round < 3; round++) {
      expect(keys.map((key) => keySplit(key))).toEqual(expected);
      // Equal text in a different string object must hit the same answer.
      expect(keys.map((key) => keySplit(key.split("").join("")))).toEqual(expected);
    }
    const long = `hello-world-${"7".repeat(1000)}`;
    expect(keySplit(long)).toBe("hello-world");
    expect(keySplit(long)).toBe("hello-world");
  });
});

describe("keySplitGroup", () => {
  it("gives the results of the examples in Distributed's key_split_group docstring", () => {
    expect(keySplitGroup(["x-2", 1])).toBe("x-2");
    expect(keySplitGroup("('x-2', 1)")).toBe("x-2");
    expect(keySplitGroup("ae05086432ca935f6eba409a8ecd4896")).toBe("data");
    expect(keySplitGroup("<module.submodule.myclass object at 0xdaf372")).toBe("myclass");
    expect(keySplitGroup("x")).toBe("x");
    expect(keySplitGroup("x-1")).toBe("x");
  });

  it.each<[unknown, string]>([
    ["hello-world-1", "hello-world"],
    [bytes("hello-world-1"), "hello-world"],
    [bytes("('x-2', 1)"), "x-2"],
    ["('hello-world', 1)", "hello-world"],
    [["hello-world", 1], "hello-world"],
    [["x"], "x"],
    ["('ae05086432ca935f6eba409a8ecd4896', 0)", "ae05086432ca935f6eba409a8ecd4896"],
    // Unlike key_split, the stringified-tuple rule strips ()'" but not "_".
    ["(_x_, 1)", "_x_"],
    ["_(x)", "x"],
    ["(x,y-1", "x"],
    ["<foo.Bar\x1cobject", "Bar"],
    [null, "Other"],
    [undefined, "Other"],
    [1, "Other"],
    [{}, "Other"],
  ])("keySplitGroup(%o) is %o, as in Distributed", (key, group) => {
    expect(keySplitGroup(key)).toBe(group);
  });

  describe("deviations: a string where Dask returns the tuple's first element as it is", () => {
    it.each<[string, unknown, string]>([
      ["Dask returns the int 5", [5, "x"], "5"],
      ["Dask returns the tuple ('a-1', 2)", [["a-1", 2], 3], "('a-1', 2)"],
      ["Dask returns b'x-2'", [bytes("x-2"), 1], "x-2"],
    ])("%s: keySplitGroup(%o) is %o", (_why, key, group) => {
      expect(keySplitGroup(key)).toBe(group);
    });
  });

  describe("deviations: Other where Dask raises or returns an empty string", () => {
    it.each<[string, unknown]>([
      ["Dask raises IndexError", ""],
      ["Dask raises IndexError", "< >"],
      ["Dask returns ''", "<x."],
      ["Dask returns ''", "()"],
      ["Dask returns ''", ["", 1]],
      ["Dask raises IndexError", []],
      ["Dask raises UnicodeDecodeError", new Uint8Array([0xff])],
      ["Dask returns None", [null, 1]],
    ])("%s: keySplitGroup(%o) is Other", (_why, key) => {
      expect(keySplitGroup(key)).toBe("Other");
    });
  });
});

describe("keyToText", () => {
  it("keeps strings, prints numbers, decodes bytes", () => {
    expect(keyToText("x-1")).toBe("x-1");
    expect(keyToText("")).toBe("");
    expect(keyToText(7)).toBe("7");
    expect(keyToText(-2.5)).toBe("-2.5");
    expect(keyToText(bytes("hello-world-1"))).toBe("hello-world-1");
    expect(keyToText(new Uint8Array([0xef, 0xbb, 0xbf, 0x78]))).toBe("\ufeffx");
    expect(keyToText(new Uint8Array([0x78, 0xff]))).toBe("x\ufffd");
  });

  // Expected texts are CPython 3.11's repr() of the same tuples.
  it.each<[Key, string]>([
    [["x-2", 1], "('x-2', 1)"],
    [["x"], "('x',)"],
    [[], "()"],
    [[["a", 1], 2], "(('a', 1), 2)"],
    [[["a"]], "(('a',),)"],
    [[-3, 2.5], "(-3, 2.5)"],
    [["it's", 1], `("it's", 1)`],
    [['a"b', 1], `('a"b', 1)`],
    [["a'b\"c", 1], `('a\\'b"c', 1)`],
    [["tab\there\nnew\rret", 0], "('tab\\there\\nnew\\rret', 0)"],
    [["back\\slash", 1], "('back\\\\slash', 1)"],
    [["é", 1], "('é', 1)"],
    [["\u200b", 1], "('\\u200b', 1)"],
    [["\u{1F600}", 1], "('\u{1F600}', 1)"],
    [["\x00\x7f\x85\xa0", 1], "('\\x00\\x7f\\x85\\xa0', 1)"],
    [["\ud800"], "('\\ud800',)"],
    [["\u{E0001}"], "('\\U000e0001',)"],
    // Bytes inside a tuple render as their text, not b'...', so the text splits the same way.
    [[bytes("x-2"), 1], "('x-2', 1)"],
  ])("renders %o as Python's repr %s", (key, text) => {
    expect(keyToText(key)).toBe(text);
  });

  it("gives a text that splits to the same group as the tuple", () => {
    expect(keySplitGroup(keyToText(["sum-aggregate-1f2e", 3, 0]))).toBe("sum-aggregate-1f2e");
    expect(keySplit(keyToText(["inc-1f2e", 3]))).toBe("inc");
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["undefined", undefined],
    ["NaN", NaN],
    ["a boolean", false],
    ["an object", { 0: "x" }],
    ["a function", () => "x"],
    ["a bigint", 1n],
    ["another typed array", new Int8Array([1])],
    ["a tuple holding null", ["x", null]],
    ["a tuple holding NaN", ["x", NaN]],
    ["a nested tuple holding an object", ["x", [1, {}]]],
    ["a sparse array", new Array(2)],
  ])("is undefined for %s, which is not a key", (_what, value) => {
    expect(keyToText(value)).toBeUndefined();
    expect(isKey(value)).toBe(false);
  });

  it("refuses cyclic and too deeply nested arrays instead of overflowing the stack", () => {
    const cyclic: unknown[] = ["x"];
    cyclic.push(cyclic);
    expect(keyToText(cyclic)).toBeUndefined();
    expect(isKey(cyclic)).toBe(false);
    let deep: unknown = "x";
    for (let i = 0; i < 32; i++) deep = [deep];
    expect(isKey(deep)).toBe(true);
    expect(keyToText(deep)).toBe("(".repeat(32) + "'x'" + ",)".repeat(32));
    expect(isKey([deep])).toBe(false);
    expect(keyToText([deep])).toBeUndefined();
  });
});

describe("isKey", () => {
  it.each<[string, unknown]>([
    ["a string", "x-1"],
    ["the empty string", ""],
    ["a number", 0],
    ["Infinity", Infinity],
    ["bytes", bytes("x")],
    ["a Buffer", Buffer.from("x")],
    ["a tuple", ["x-1", 0, [1, bytes("y")]]],
    ["the empty tuple", []],
  ])("accepts %s", (_what, value) => {
    expect(isKey(value)).toBe(true);
  });
});

describe("properties", () => {
  // Characters that exercise every rule: letters in and out of a-f, digits, the separators
  // and stripped characters, Python-only whitespace, non-ASCII and astral letters, a combining
  // mark, an emoji and a lone surrogate.
  const interesting = fc.constantFrom(
    ..."abcdefxyzABF0179-,_()'\"<>. \\\n\t".split(""),
    "\x1c",
    "\x85",
    "\ufeff",
    "é",
    "ª",
    SCRIPT_X,
    "\u0301",
    "\u{1F600}",
    "\ud800",
  );
  const keyText = fc.oneof(
    fc.string({ unit: interesting, maxLength: 40 }),
    fc.string(),
    fc.string({ unit: "binary", maxLength: 20 }),
  );
  const keys = fc.letrec<{ key: Key }>((tie) => ({
    key: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      keyText,
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.uint8Array({ maxLength: 12 }),
      fc.array(tie("key"), { maxLength: 4 }),
    ),
  })).key;

  it("keySplit and keySplitGroup never throw and always give a non-empty string", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), keys), (value) => {
        const prefix = keySplit(value);
        const group = keySplitGroup(value);
        return typeof prefix === "string" && prefix.length > 0 && typeof group === "string" && group.length > 0;
      }),
      { numRuns: 5000 },
    );
  });

  it("a tuple has the prefix of its first element", () => {
    fc.assert(
      fc.property(keyText, fc.integer(), (text, index) => keySplit(text) === keySplit([text, index])),
      { numRuns: 5000 },
    );
  });

  it("the memo never changes an answer", () => {
    // Keys longer than the memo's limit are always computed afresh; a trailing word of digits
    // never changes the prefix, so the long key must agree with the short, memoized one.
    fc.assert(
      fc.property(keyText, (text) => {
        const first = keySplit(text);
        return keySplit(text) === first && keySplit(`${text}-${"7".repeat(300)}`) === first;
      }),
      { numRuns: 5000 },
    );
  });

  it("isKey is true exactly when keyToText gives a text", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), keys), (value) => isKey(value) === (keyToText(value) !== undefined)),
      { numRuns: 5000 },
    );
  });

  it("the text of a tuple has the tuple's group when its name has no quotes, parens or commas", () => {
    const name = fc.string({ unit: fc.constantFrom(..."abcxyz019-_".split("")), minLength: 1, maxLength: 20 });
    fc.assert(
      fc.property(name, fc.integer(), (text, index) => {
        const tuple = [text, index];
        return keySplitGroup(keyToText(tuple)) === keySplitGroup(tuple);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("the key helpers given what no key is", () => {
  it("never throw, even for a Proxy whose every trap throws", () => {
    const throwing = () => {
      throw new Error("trap threw");
    };
    const proxy = new Proxy([], { get: throwing, has: throwing, ownKeys: throwing, getPrototypeOf: throwing });
    for (const value of [proxy, [proxy], [["x", proxy]]]) {
      expect(isKey(value)).toBe(false);
      expect(keyToText(value)).toBeUndefined();
    }
    expect([proxy, [proxy]].map(keySplit)).toEqual(["Other", "Other"]);
    expect([proxy, [proxy]].map(keySplitGroup)).toEqual(["Other", "Other"]);
    // A tuple's name is its first element's, which is readable here.
    expect(keySplit([["x", proxy]])).toBe("x");
  });
});

describe("keySplitEnd: where key_split's answer ends when it is the key's own start", () => {
  it("is -1 or the length of keySplit(key), which the key then begins with", () => {
    const check = (key: string): void => {
      const end = keySplitEnd(key);
      if (end !== -1) expect(key.slice(0, end), key).toBe(keySplit(key));
    };
    for (const key of ["x-1", "hello-world-1", "x-abcdefab", "x-abcdefgh-1", "inc-ab-45c0", "a", "A-b-C-1", "x-y,z-1"])
      check(key);
    expect(keySplitEnd("hello-world-1")).toBe(11);
    expect(keySplitEnd("rechunk-merge-b-45c08a19689ab7b8b5db2ccd0a8634f5")).toBe(15);
    // Not a slice of the key, or not a plain one: -1, and keySplit answers.
    for (const key of [
      "45c08a19689ab7b8b5db2ccd0a8634f5",
      "abcdefabcdefabcdefabcdefabcdefab",
      "('x-2', 1)",
      "_(x)-1",
      "été-1",
      "<a.b object at 0x1>",
      "",
      "-x",
    ])
      expect(keySplitEnd(key), key).toBe(-1);
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "b", "f", "z", "-", "1", ",", "_", "(", "é", "<", "X") }),
        (key) => check(key),
      ),
      { numRuns: 2000 },
    );
  });
});
