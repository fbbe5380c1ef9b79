/**
 * The one terminal escaper, for the CLI's human output and the libraries' text formats (summary):
 * journal fields may hold ESC and other control bytes that, printed raw, clear the screen, retitle the terminal or forge lines. JSON output stays exact
 * (JSON.stringify escapes C0 itself); data commands (`cat`, `rebuild --stdout`) stay byte-exact.
 *
 * Guarantees: the result holds no C0 control (U+0000–U+001F), DEL, C1 control (U+0080–U+009F),
 * line/paragraph separator or bidirectional override; each becomes a visible escape (`\x1b`,
 * `\u202e`; `\n`, `\r`, `\t` spelled so). `escapeTerminalText` keeps `\n` and `\t` (the layout of
 * a whole block of human output) and escapes the rest. Printable text, including non-ASCII, is
 * unchanged.
 *
 * @example
 *   escapeTerminal("run\x1b]0;pwned\x07") // "run\\x1b]0;pwned\\x07"
 */
// C0, DEL, C1, U+2028/2029, bidi embeddings/overrides/isolates (U+202A–202E, U+2066–2069), U+200E/200F.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function visible(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const cp = ch.codePointAt(0) ?? 0;
  return cp <= 0xff ? `\\x${cp.toString(16).padStart(2, "0")}` : `\\u${cp.toString(16).padStart(4, "0")}`;
}

/** One field for a terminal: every control character made visible (see the module doc). */
export function escapeTerminal(s: string): string {
  return s.replace(UNSAFE, visible);
}

/** A block of human output: controls made visible, newlines and tabs kept. */
export function escapeTerminalText(s: string): string {
  return s.replace(UNSAFE_BUT_LAYOUT, visible);
}

