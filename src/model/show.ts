/**
 * A short, printable description of any value for a drop's detail, that never throws: a
 * hostile value (a Symbol, a BigInt, a Proxy, a throwing `toString`, a null-prototype object)
 * is described by its type, never converted through code of its own.
 */
export function show(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
    case "number":
    case "boolean":
    case "undefined":
      return String(value);
    case "bigint":
      return `${value}n`;
    case "symbol":
      return "a symbol";
    case "function":
      return "a function";
    default:
      return value === null ? "null" : "an object";
  }
}
