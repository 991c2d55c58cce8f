/**
 * A benchmark's options, read from the environment: numbers with their defaults, and the Deno
 * flags the service is started with.
 *
 * @module
 */

/**
 * The number the environment variable `name` holds, else `fallback`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(numberOption("BENCH_NO_SUCH_OPTION", 3), 3);
 * ```
 */
export function numberOption(name: string, fallback: number): number {
  return Number(Deno.env.get(name) ?? fallback);
}

/**
 * `BENCH_SERVICE_FLAGS`: Deno flags for the service (e.g. `--cpu-prof`, `--v8-flags=…`),
 * separated by spaces; undefined when unset.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const flags = serviceFlagsOption() ?? [];
 * assert.ok(flags.every((flag) => flag !== "" && !flag.includes(" ")));
 * ```
 */
export function serviceFlagsOption(): string[] | undefined {
  return Deno.env.get("BENCH_SERVICE_FLAGS")?.split(" ").filter(Boolean);
}
