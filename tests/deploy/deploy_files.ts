/**
 * Small readers for the deploy files the tests check without their tools (no Docker engine, no
 * YAML library): Dockerfile instructions, a nested YAML mapping by indentation, env files and
 * systemd `Environment=` lines. Each reads only the plain subset the repository's files use.
 *
 * @module
 */

/** One Dockerfile instruction: its keyword (upper case) and the rest of its line. */
export interface Instruction {
  op: string;
  args: string;
}

/**
 * A Dockerfile's instructions, continuation lines joined and comments dropped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const text = "# base\nFROM denoland/deno:2.9.6\nENV A=1 \\\n    B=2\nUSER deno\n";
 * assert.deepEqual(dockerInstructions(text), [
 *   { op: "FROM", args: "denoland/deno:2.9.6" },
 *   { op: "ENV", args: "A=1 B=2" },
 *   { op: "USER", args: "deno" },
 * ]);
 * ```
 */
export function dockerInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    if (!pending && /^\s*(#|$)/.test(raw)) continue;
    const line = raw.trim();
    if (line.endsWith("\\")) {
      pending += line.slice(0, -1).trim() + " ";
      continue;
    }
    const whole = (pending + line).trim();
    pending = "";
    const [, op, args] = /^(\S+)\s*(.*)$/.exec(whole)!;
    out.push({ op: op.toUpperCase(), args });
  }
  return out;
}

/**
 * The `NAME=value` pairs of Dockerfile `ENV` instructions (values without spaces or quotes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const env = dockerEnv([{ op: "ENV", args: "HOST=0.0.0.0 PORT=8080" }]);
 * assert.deepEqual(env, { HOST: "0.0.0.0", PORT: "8080" });
 * ```
 */
export function dockerEnv(instructions: readonly Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { op, args } of instructions) {
    if (op !== "ENV") continue;
    for (const pair of args.split(/\s+/)) {
      const [name, ...value] = pair.split("=");
      env[name] = value.join("=");
    }
  }
  return env;
}

/**
 * The lines of a nested YAML block mapping, found by key path and indentation (two spaces a
 * level), each with its own indentation removed; empty when the path is not there.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const yaml = "services:\n  proxy:\n    environment:\n      A: 1\n      B: x\n    ports: []\n";
 * assert.deepEqual(yamlBlock(yaml, ["services", "proxy", "environment"]), ["A: 1", "B: x"]);
 * ```
 */
export function yamlBlock(text: string, path: readonly string[]): string[] {
  let lines = text.split("\n").filter((l) => l.trim() && !/^\s*#/.test(l));
  for (const key of path) {
    const start = lines.findIndex((l) => l === `${key}:`);
    if (start < 0) return [];
    const body: string[] = [];
    for (const l of lines.slice(start + 1)) {
      if (!l.startsWith("  ")) break;
      body.push(l.slice(2));
    }
    lines = body;
  }
  return lines;
}

/**
 * The `KEY: value` pairs of a block from {@linkcode yamlBlock} (top level only; quotes removed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(yamlPairs(["A: 1", 'B: "x"', "  nested: no"]), { A: "1", B: "x" });
 * ```
 */
export function yamlPairs(block: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of block) {
    const m = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
    if (m) out[m[1]] = m[2].replace(/^"(.*)"$/, "$1");
  }
  return out;
}

/**
 * The variables an env file sets (`NAME=value` lines; comments and blank lines skipped).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(envFile("# comment\nHOST=127.0.0.1\n\nPORT=8080\n"), {
 *   HOST: "127.0.0.1",
 *   PORT: "8080",
 * });
 * ```
 */
export function envFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2];
  }
  return out;
}

/**
 * The names a systemd unit sets with `Environment=` (every `NAME=value` word of each line).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const unit = "[Service]\nEnvironment=DATA_DIR=%S/x LOG_LEVEL=info\nEnvironmentFile=/etc/x\n";
 * assert.deepEqual(unitEnvironmentNames(unit), ["DATA_DIR", "LOG_LEVEL"]);
 * ```
 */
export function unitEnvironmentNames(unit: string): string[] {
  return [...unit.matchAll(/^Environment=(.*)$/gm)]
    .flatMap(([, words]) => words.split(/\s+/).map((w) => w.split("=")[0]));
}
