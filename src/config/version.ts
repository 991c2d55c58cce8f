/**
 * The service's version. `deno.json`'s `version` is the one to change; this constant repeats it
 * because a compiled binary cannot read `deno.json` at run time, and a test keeps the two equal.
 *
 * @module
 */

/**
 * The version `--version`, `/healthz` and the start-up log report.
 */
export const VERSION = "1.0.0";
