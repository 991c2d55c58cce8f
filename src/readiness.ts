/**
 * Readiness of the service's own backends, from its configuration alone: never a caller's
 * cookies, never a zero-login session, never the Parser's internal routes.
 *
 * - Core (`CORE_URL`): `GET /etapi/app-info` with the server's `PUBLIC_CORE_TOKEN` (the least
 *   privileged) or `CORE_TOKEN` (configuration requires one with `CORE_URL`); a refused token is
 *   not ready, since the share and environment-credential routes would fail with it.
 * - Parser (`PARSER_URL`): `GET /health` without credentials; any answer counts, since its own
 *   checks (`degraded`) concern the Parser's dependencies, not whether this service can reach it.
 *
 * A backend that is not configured is reported `configured: false` and does not hold readiness
 * back: no backend configured at all is ready, as restarting or waiting cannot change it and
 * every backend route answers 503 NOT_CONFIGURED explaining what to set.
 *
 * @module
 */
import { z } from "zod";
import type { Config } from "./config.ts";
import { ApiError } from "./http/errors.ts";
import { createCoreClient } from "./upstream/core.ts";
import { readBodyText, type UpstreamDeps, upstreamFetch } from "./upstream/fetch.ts";

/**
 * One backend's readiness (no URL or token ever appears in it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const down = { ok: false, configured: true, error: "UPSTREAM_TIMEOUT" };
 * assert.deepEqual(backendReadinessSchema.parse(down), down);
 * assert.equal(backendReadinessSchema.safeParse({ ok: false, configured: false }).success, false);
 * ```
 */
export const backendReadinessSchema = z.union([
  z.object({ ok: z.literal(true), configured: z.literal(false) }).describe("not configured"),
  z.object({
    ok: z.literal(true),
    configured: z.literal(true),
    latencyMs: z.number(),
    version: z.string().optional().describe("Core's version"),
    status: z.string().optional().describe("The Parser's own health status"),
  }).describe("answered: `latencyMs`, Core's `version`, the Parser's `status`"),
  z.object({
    ok: z.literal(false),
    configured: z.literal(true),
    error: z.string(),
  }).describe("did not answer: `error` is the error code"),
]);

/** One backend's readiness. */
export type BackendReadiness = z.output<typeof backendReadinessSchema>;

/**
 * The `/readyz` answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const report = {
 *   status: "ready",
 *   core: { ok: true, configured: false },
 *   parser: { ok: true, configured: true, latencyMs: 3, status: "ok" },
 *   unavailable: [],
 * };
 * assert.equal(readinessReportSchema.safeParse(report).success, true);
 * ```
 */
export const readinessReportSchema = z.object({
  status: z.enum(["ready", "not-ready"]),
  core: backendReadinessSchema,
  parser: backendReadinessSchema,
  unavailable: z.array(z.enum(["core", "parser"])).describe(
    "The configured backends that did not answer (empty when ready)",
  ),
});

/** The `/readyz` answer. */
export type ReadinessReport = z.output<typeof readinessReportSchema>;

/** Checks the configured backends; see the module notes. */
export interface ReadinessProbe {
  check(signal: AbortSignal): Promise<ReadinessReport>;
}

const parserHealthSchema = z.looseObject({ status: z.string().max(64) });

/**
 * Creates the probe of one app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "./config.ts";
 * const config = loadConfig({ PARSER_URL: "http://parser:3000" });
 * const refused = () => Promise.reject(new TypeError("connection refused"));
 * const report = await createReadinessProbe(config, refused).check(new AbortController().signal);
 * assert.equal(report.status, "not-ready");
 * assert.deepEqual(report.unavailable, ["parser"]);
 * assert.deepEqual(report.core, { ok: true, configured: false });
 * ```
 */
export function createReadinessProbe(config: Config, fetchFn: typeof fetch): ReadinessProbe {
  const deps = (signal: AbortSignal): UpstreamDeps => ({
    fetch: fetchFn,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    maxBodyBytes: 64 * 1024,
    signal,
  });

  /** Times `probe`; a backend error becomes `{ ok: false }` with its code. */
  const timed = async (
    probe: () => Promise<{ version?: string; status?: string }>,
  ): Promise<BackendReadiness> => {
    const started = performance.now();
    const latencyMs = () => Math.round(performance.now() - started);
    try {
      return { ok: true, configured: true, latencyMs: latencyMs(), ...(await probe()) };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e; // a client abort ends the request as usual
      return { ok: false, configured: true, error: e.code };
    }
  };

  const core = (signal: AbortSignal): Promise<BackendReadiness> => {
    if (!config.CORE_URL) return Promise.resolve({ ok: true, configured: false });
    const token = config.PUBLIC_CORE_TOKEN ?? config.CORE_TOKEN ?? "";
    const client = createCoreClient({ baseUrl: config.CORE_URL, token }, deps(signal));
    return timed(async () => ({ version: (await client.appInfo()).appVersion }));
  };

  const parser = (signal: AbortSignal): Promise<BackendReadiness> => {
    const baseUrl = config.PARSER_URL;
    if (!baseUrl) return Promise.resolve({ ok: true, configured: false });
    return timed(async () => {
      const d = deps(signal);
      const up = await upstreamFetch(d, "Parser", baseUrl, { path: "/health" });
      const text = await readBodyText(up, d, "Parser", 64 * 1024).catch(() => "");
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        raw = undefined;
      }
      const health = parserHealthSchema.safeParse(raw);
      return health.success ? { status: health.data.status } : {};
    });
  };

  return {
    async check(signal) {
      const [c, p] = await Promise.all([core(signal), parser(signal)]);
      const unavailable = ([["core", c], ["parser", p]] as const)
        .filter(([, r]) => !r.ok).map(([name]) => name);
      return {
        status: unavailable.length ? "not-ready" : "ready",
        core: c,
        parser: p,
        unavailable,
      };
    },
  };
}
