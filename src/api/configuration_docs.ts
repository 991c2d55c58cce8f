/**
 * The generated configuration reference, `docs/configuration.md`, as a pure function of the
 * environment schema: the page cannot say something the code does not do. `deno task docs`
 * writes it (reference_docs_task.ts) and a test keeps it current.
 *
 * @module
 */
import { z } from "zod";
import type { envSchema } from "../config/service_config.ts";
import { bounds, cell, code, GENERATED_NOTE, type Schema } from "./reference_docs.ts";

/** One variable of the configuration reference. */
export interface ConfigRow {
  name: string;
  /** The default as the page shows it, e.g. `` `8080` `` or `` `15000` (15 s) ``; `—` for none. */
  default: string;
  /** Accepted values, e.g. `0–65535` or `` `auto`, `always` ``. */
  allowed: string;
  meaning: string;
}

const duration = (ms: number) => {
  for (
    const [unit, size] of [["day", 86_400_000], ["h", 3_600_000], ["min", 60_000], [
      "s",
      1000,
    ]] as const
  ) {
    if (ms >= size && ms % size === 0) {
      return `${ms / size} ${unit}${unit === "day" && ms > size ? "s" : ""}`;
    }
  }
  return `${ms} ms`;
};
const size = (bytes: number) => {
  for (const [unit, n] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 1024]] as const) {
    if (bytes >= n && bytes % n === 0) return `${bytes / n} ${unit}`;
  }
  return `${bytes} bytes`;
};

/**
 * The configuration reference's rows, in the schema's order: default and accepted values read
 * from the schema, the meaning from each variable's description. Durations (`*_MS`) and sizes
 * (`*_BYTES`) are also shown in readable units.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { envSchema } from "../config/service_config.ts";
 *
 * const port = configurationRows(envSchema).find((r) => r.name === "PORT");
 * assert.equal(port?.default, "`8080`");
 * ```
 */
export function configurationRows(schema: typeof envSchema): ConfigRow[] {
  const js = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return Object.entries(js.properties as Record<string, Schema>).map(([name, s]) => {
    const human = name.endsWith("_MS") ? duration : name.endsWith("_BYTES") ? size : undefined;
    let def = "—";
    if (s.default !== undefined) {
      def = code(s.default) +
        (human && typeof s.default === "number" && s.default > 0 ? ` (${human(s.default)})` : "");
    }
    let allowed: string;
    if (Array.isArray(s.enum)) allowed = s.enum.map(code).join(", ");
    else if (s.type === "integer") {
      allowed = human
        ? bounds(s.minimum, s.maximum, "", (n) => n === 0 ? "0" : human(n)).replace("–", " – ")
        : bounds(s.minimum, s.maximum);
    } else if (s.format === "uri") allowed = "URL";
    else if (typeof s.pattern === "string") allowed = `matching \`${s.pattern}\``;
    else if (typeof s.minLength === "number" && s.minLength > 1) {
      allowed = `≥ ${s.minLength} characters`;
    } else allowed = "text";
    return { name, default: def, allowed, meaning: String(s.description ?? "") };
  });
}

/**
 * `docs/configuration.md`: every environment variable with its default, accepted values and
 * meaning, from {@linkcode configurationRows}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { envSchema } from "../config/service_config.ts";
 *
 * assert.equal(configurationMarkdown(envSchema).includes("| `PORT` |"), true);
 * ```
 */
export function configurationMarkdown(schema: typeof envSchema): string {
  return [
    GENERATED_NOTE,
    "",
    "# Configuration",
    "",
    "Every setting is an environment variable, validated at start-up: an invalid one stops the " +
    "process with exit status 2 and one line per problem, naming the variable. Empty values count " +
    "as unset. `deno task dev` sets the backend variables itself (see " +
    "[development](development.md)).",
    "",
    "| Variable | Default | Accepted | Meaning |",
    "| --- | --- | --- | --- |",
    ...configurationRows(schema).map((r) =>
      `| \`${r.name}\` | ${cell(r.default)} | ${cell(r.allowed)} | ${cell(r.meaning)} |`
    ),
    "",
  ].join("\n");
}
