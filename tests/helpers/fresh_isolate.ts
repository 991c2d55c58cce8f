/**
 * Checks that need an isolate where nothing is loaded yet (the HTML engine before its first
 * use, a service's first request). A worker has a module graph of its own, so it is as fresh as
 * a new process, whatever the calling test file's isolate has loaded before.
 *
 * The worker module calls {@linkcode answerInWorker} with its checks; the test calls
 * {@linkcode inFreshIsolate}, which fails with the worker's error.
 *
 * @module
 */
/// <reference lib="deno.worker" />

/** What a worker posts back: no `error` when its checks held. */
type Answer = { error?: string };

/** Starts the worker module `entry`, posts it `message`, and fails with the error it answers. */
export async function inFreshIsolate(entry: URL, message: unknown): Promise<void> {
  const worker = new Worker(entry, { type: "module" });
  try {
    const answer = new Promise<Answer>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<Answer>) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
    });
    worker.postMessage(message);
    const { error } = await answer;
    if (error !== undefined) throw new Error(error);
  } finally {
    worker.terminate();
  }
}

/** In a worker: runs `checks` on each message and posts back what they threw, if anything. */
export function answerInWorker<T>(checks: (message: T) => void | Promise<void>): void {
  self.onmessage = async (e: MessageEvent<T>) => {
    try {
      await checks(e.data);
      self.postMessage({} satisfies Answer);
    } catch (error) {
      const text = error instanceof Error ? error.stack ?? error.message : String(error);
      self.postMessage({ error: text } satisfies Answer);
    }
  };
}
