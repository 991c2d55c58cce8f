/**
 * The Parser and Core base URLs credentials may point at: the configured one plus its
 * allow-list. A cookie or a Parser can name any address; only these are ever used.
 *
 * @module
 */
import type { Config } from "../config/service_config.ts";

/**
 * The allowed Parser base URLs: `PARSER_URL` and `PARSER_ALLOWED_URLS`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * const urls = allowedParserUrls(loadConfig({ PARSER_URL: "http://parser:3000" }));
 * assert.deepEqual([...urls], ["http://parser:3000"]);
 * ```
 */
export function allowedParserUrls(config: Config): ReadonlySet<string> {
  return new Set(
    [config.PARSER_URL, ...config.PARSER_ALLOWED_URLS].filter((u): u is string => !!u),
  );
}

/**
 * The allowed Core base URLs: `CORE_URL` and `CORE_ALLOWED_URLS`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * assert.equal(allowedCoreUrls(loadConfig({})).size, 0);
 * ```
 */
export function allowedCoreUrls(config: Config): ReadonlySet<string> {
  return new Set([config.CORE_URL, ...config.CORE_ALLOWED_URLS].filter((u): u is string => !!u));
}
