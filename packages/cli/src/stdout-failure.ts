/**
 * What a stdout write error other than EPIPE (a full device, an I/O error) becomes: a coded
 * error (NO_SPACE, IO_ERROR, … from the durable-file module's errno mapping) that rejects the pending and every later `io.stdout` write, and that `main` still sees
 * when it surfaces after the last write resolved, so the CLI never exits silently (node's exit 13
 * of a never-settled write) or 0 after losing output. EPIPE stays a quiet success (see main).
 */
import type { JournalError } from "@hankweave-journal/core";
import { ioError } from "@hankweave-journal/journal";

/** The stdout failure tracker of one stream (one per stream: a second call returns the first). */
export interface StdoutFailure {
  /** The first non-EPIPE error of the stream, once it happened. */
  readonly error: JournalError | undefined;
  /** Wait for "drain", or reject with the failure when it comes first. */
  waitDrain(resolve: () => void, reject: (e: JournalError) => void): void;
  /** After everything written so far was handed to the OS: the failure, if any. */
  settled(): Promise<JournalError | undefined>;
}

const trackers = new WeakMap<NodeJS.WritableStream, StdoutFailure>();

/** The failure tracker of `stream` (created on first call; `controller` is aborted on failure). */
export function stdoutFailure(stream: NodeJS.WritableStream, controller?: AbortController): StdoutFailure {
  const known = trackers.get(stream);
  if (known) return known;
  let error: JournalError | undefined;
  const waiting = new Set<(e: JournalError) => void>();
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE" || error) return;
    error = ioError(err, "<stdout>"); // NO_SPACE for a full device, READ_ONLY, IO_ERROR, …
    for (const reject of waiting) reject(error);
    waiting.clear();
    controller?.abort();
  });
  const tracker: StdoutFailure = {
    get error() {
      return error;
    },
    waitDrain(resolve, reject) {
      const onDrain = (): void => {
        waiting.delete(reject);
        resolve();
      };
      waiting.add((e) => {
        stream.removeListener("drain", onDrain);
        reject(e);
      });
      stream.once("drain", onDrain);
    },
    settled() {
      return new Promise((resolve) => {
        if (error) return resolve(error);
        try {
          stream.write("", () => setImmediate(() => resolve(error)));
        } catch {
          setImmediate(() => resolve(error));
        }
      });
    },
  };
  trackers.set(stream, tracker);
  return tracker;
}
