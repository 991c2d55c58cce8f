/**
 * The last resort of a request's credentials: the server's own `PARSER_URL`/`PARSER_TOKEN` and
 * `CORE_URL`/`CORE_TOKEN`. When those are missing too, the error says whether logging in would
 * help (401) or the service lacks configuration (503).
 *
 * @module
 */
import type { Config } from "../config/service_config.ts";
import { notAuthenticated, notConfigured } from "../http/errors.ts";
import type { CoreCredentials } from "../upstream/core.ts";
import type { SourcedParserCredentials } from "./request_credentials.ts";

/** The environment's credentials, or the error that stands for their absence. */
export interface EnvironmentFallback {
  parser(): SourcedParserCredentials;
  core(): CoreCredentials;
}

/**
 * Reads the environment's credentials once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * const fallback = environmentFallback(loadConfig({ PARSER_URL: "http://parser:3000" }));
 * // a user could log in at the Parser: told to, not told the service is broken
 * assert.throws(() => fallback.parser(), { status: 401, code: "UNAUTHORIZED" });
 * assert.throws(() => fallback.core(), { status: 503, code: "NOT_CONFIGURED" });
 * ```
 */
export function environmentFallback(config: Config): EnvironmentFallback {
  const envCore: CoreCredentials | null = config.CORE_URL && config.CORE_TOKEN
    ? { baseUrl: config.CORE_URL, token: config.CORE_TOKEN }
    : null;
  const envParser = config.PARSER_URL && config.PARSER_TOKEN
    ? { baseUrl: config.PARSER_URL, token: config.PARSER_TOKEN, source: "env" as const }
    : null;
  // Without credentials of its own, a caller who could log in is told to (401), not that the
  // service lacks configuration (503); zero-login failing is the service's problem, not theirs.
  const loginGivesParser = !!config.PARSER_URL && !config.ZERO_LOGIN;
  const loginGivesCore = loginGivesParser && !!config.PARSER_INTERNAL_SECRET;
  return {
    parser() {
      if (envParser) return envParser;
      throw loginGivesParser ? notAuthenticated("parser") : notConfigured("parser");
    },
    core() {
      if (envCore) return envCore;
      throw loginGivesCore ? notAuthenticated("core") : notConfigured("core");
    },
  };
}
