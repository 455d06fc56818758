/**
 * Text from a trace file made safe for a terminal: a key, prefix or activity name can hold
 * anything, and printed raw an ESC sequence would recolour, retitle or rewrite the user's
 * terminal, and a bidirectional override would make the text read differently from what it is.
 * Each such character is shown as a visible escape instead (ESC as `\x1b`), so nothing is lost:
 * the user sees that the name holds it.
 */

/** C0 controls but tab, DEL, C1 controls, line and paragraph separators, bidi embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function visible(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `text` with every terminal control character (newlines included) replaced by a visible escape. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, visible);
}

/** Several lines of output: each line made terminal-safe, the line breaks kept. */
export function terminalSafeLines(text: string): string {
  return text.split("\n").map(terminalSafe).join("\n");
}
