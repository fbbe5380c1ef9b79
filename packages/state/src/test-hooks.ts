/**
 * Crash-test hooks, controlled by the environment (never set in production):
 * `HANKWEAVE_STATE_KILL_AFTER_APPEND=<n>` makes the process SIGKILL itself right after the n-th
 * transition append of this process, i.e. after the journal line is written and BEFORE the state
 * is applied and state.json saved — the window write-ahead exists for.
 */
const KILL_AFTER_APPEND = Number(process.env.HANKWEAVE_STATE_KILL_AFTER_APPEND ?? "0");

/** Called by the engine after each transition append (count = appends so far in this process). */
export function afterAppendHook(count: number): void {
  if (KILL_AFTER_APPEND > 0 && count === KILL_AFTER_APPEND) process.kill(process.pid, "SIGKILL");
}
