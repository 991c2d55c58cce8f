/**
 * Starts the roles of bench/stack.ts (Core double, Parser double, service) in their own
 * processes, shared by every benchmark.
 *
 * @module
 */

/**
 * Starts one role of bench/stack.ts in its own process and reads its address line.
 *
 * @example
 * ```ts
 * const core = await spawnRole(["core"]);
 * console.log(core.info.url);
 * core.child.kill("SIGTERM");
 * ```
 */
export async function spawnRole(
  args: string[],
): Promise<{ child: Deno.ChildProcess; info: Record<string, string> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-sys",
      new URL("./stack.ts", import.meta.url).pathname,
      ...args,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let first = "";
  while (!first.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`bench stack ${args[0]} exited early`);
    first += value;
  }
  reader.releaseLock();
  return { child, info: JSON.parse(first.split("\n")[0]) };
}

/**
 * The median of a list of numbers (NaN for an empty list).
 *
 * @example
 * ```ts
 * median([3, 1, 2]); // 2
 * ```
 */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
