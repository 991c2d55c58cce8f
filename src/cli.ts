/**
 * The command line of the entry point: no option starts the service; `--help`, `--version` and
 * `--print-routes` print and exit; anything else is refused with exit status 2 (never a server
 * started by a mistyped flag). The environment list of `--help` comes from the configuration
 * schema, like the configuration reference page, so the two cannot disagree.
 *
 * @module
 */
import { envSchema } from "./config/service_config.ts";
import { routeTableMarkdown } from "./api/openapi.ts";
import { configurationRows } from "./api/configuration_docs.ts";
import { allRoutes } from "./routes/index.ts";
import { VERSION } from "./config/version.ts";

/** What the entry point does with its arguments. */
export type CliAction =
  | { kind: "serve" }
  /** Print `text` to standard output and exit 0. */
  | { kind: "print"; text: string }
  /** Print `message` to standard error and exit 2. */
  | { kind: "refuse"; message: string };

const OPTIONS: readonly { flags: string[]; text: string; run: () => string }[] = [
  { flags: ["--help", "-h"], text: "print this help and exit", run: () => usageText() },
  { flags: ["--version"], text: "print the version and exit", run: () => VERSION },
  {
    flags: ["--print-routes"],
    text: "print the route table (Markdown) and exit; docs/api.md has it in full",
    run: () => routeTableMarkdown(allRoutes),
  },
];

/**
 * Decides what the arguments ask for. An unknown argument is refused even beside a known one;
 * among known ones, the first listed in `--help` wins.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { VERSION } from "./config/version.ts";
 * assert.deepEqual(cliAction([]), { kind: "serve" });
 * assert.deepEqual(cliAction(["--version"]), { kind: "print", text: VERSION });
 * assert.equal(cliAction(["--port", "80"]).kind, "refuse");
 * ```
 */
export function cliAction(args: readonly string[]): CliAction {
  const unknown = args.find((a) => !OPTIONS.some((o) => o.flags.includes(a)));
  if (unknown !== undefined) {
    return {
      kind: "refuse",
      message: `unknown argument ${JSON.stringify(unknown)}: configuration comes from ` +
        "environment variables; see --help",
    };
  }
  const chosen = OPTIONS.find((o) => o.flags.some((f) => args.includes(f)));
  return chosen ? { kind: "print", text: chosen.run() } : { kind: "serve" };
}

/** Inline code marks read as noise in a terminal. */
const plain = (s: string) => s.replaceAll("`", "");

/** Words of `text` in lines of at most `width` characters (a longer word gets its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * The `--help` text: usage, options, then every environment variable with its default,
 * accepted values and meaning.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const help = usageText();
 * assert.match(help, /^ {2}CORE_URL\b/m);
 * assert.match(help, /^ {2}PORT {2}default 8080; 0–65535$/m);
 * ```
 */
export function usageText(): string {
  const out = [
    `Lore Portal Proxy ${VERSION}: the backend-for-frontend of the lore portal.`,
    "",
    "Usage: lore-portal-proxy [option]      (compiled binary)",
    "       deno task start [option]        (from source)",
    "",
    "Without an option the service starts, configured from the environment: an invalid",
    "variable stops it with exit status 2 and one line per problem.",
    "",
    "Options:",
    ...OPTIONS.map((o) => `  ${o.flags.join(", ").padEnd(16)}${o.text}`),
    "",
    "Environment (empty values count as unset):",
  ];
  for (const row of configurationRows(envSchema)) {
    const facts = [row.default === "—" ? "no default" : `default ${row.default}`, row.allowed];
    out.push("", `  ${row.name}  ${plain(facts.join("; "))}`);
    out.push(...wrap(plain(row.meaning), 72).map((l) => `      ${l}`));
  }
  return out.join("\n");
}
