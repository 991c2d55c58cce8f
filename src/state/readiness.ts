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
 * back while the other one is configured: Core alone serves the lore and the public site, the
 * Parser alone serves signed-in users (their Core comes from it). With neither configured the
 * service can serve nothing, so it is not ready and `reason` says what to set: a load balancer
 * or orchestrator then shows the deployment as broken instead of healthy.
 *
 * @module
 */
import { z } from "zod";
import type { Config } from "../config/service_config.ts";
import { ApiError } from "../http/errors.ts";
import { createCoreClient } from "../upstream/core.ts";
import { readBodyText, type UpstreamDeps, upstreamFetch } from "../upstream/fetch.ts";
import type { Deadlines } from "../util/deadlines.ts";
import type { SharedStore } from "../store/shared_store.ts";

/**
 * One backend's readiness (no URL or token ever appears in it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const down = { ok: false, configured: true, error: "UPSTREAM_TIMEOUT" };
 * assert.deepEqual(backendReadinessSchema.parse(down), down);
 * assert.equal(backendReadinessSchema.safeParse({ ok: false, configured: true }).success, false);
 * ```
 */
export const backendReadinessSchema = z.union([
  z.object({ ok: z.literal(true), configured: z.literal(false) }).describe(
    "not configured (the other backend is)",
  ),
  z.object({ ok: z.literal(false), configured: z.literal(false) }).describe(
    "not configured, and neither is the other backend",
  ),
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
  state: backendReadinessSchema.optional().describe(
    "The shared store (`STATE_URL`), when one is configured: reported, never holding readiness " +
      "back (every instance shares it: a balancer taking them all out would stop the public " +
      "site too, which does without it)",
  ),
  unavailable: z.array(z.enum(["core", "parser"])).describe(
    "The backends holding readiness back: each configured one that did not answer, or both " +
      "when neither is configured (empty when ready)",
  ),
  reason: z.string().optional().describe(
    "When not ready: which backend does not answer, or which variables to set",
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
 * Creates the probe of one app; each check gives up after `UPSTREAM_TIMEOUT_MS`, counted by
 * `deadlines` (default the process-wide scheduler).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * const config = loadConfig({ PARSER_URL: "http://parser:3000" });
 * const refused = () => Promise.reject(new TypeError("connection refused"));
 * const report = await createReadinessProbe(config, refused).check(new AbortController().signal);
 * assert.equal(report.status, "not-ready");
 * assert.deepEqual(report.unavailable, ["parser"]);
 * assert.equal(report.reason, "Parser is not available (UNREACHABLE)");
 * assert.deepEqual(report.core, { ok: true, configured: false });
 * ```
 */
export function createReadinessProbe(
  config: Config,
  fetchFn: typeof fetch,
  deadlines?: Deadlines,
  store?: SharedStore,
): ReadinessProbe {
  const deps = (signal: AbortSignal): UpstreamDeps => ({
    fetch: fetchFn,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    maxBodyBytes: 64 * 1024,
    signal,
    deadlines,
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

  // the shared store answers a read (bounded by STATE_TIMEOUT_MS; it rejects with our 503)
  const state = (): Promise<BackendReadiness> | undefined =>
    store &&
    timed(async () => {
      await store.get("readiness");
      return {};
    });

  return {
    async check(signal) {
      if (!config.CORE_URL && !config.PARSER_URL) {
        const none = { ok: false, configured: false } as const;
        return {
          status: "not-ready",
          core: none,
          parser: none,
          unavailable: ["core", "parser"],
          reason: NOTHING_CONFIGURED,
        };
      }
      const [c, p, s] = await Promise.all([core(signal), parser(signal), state()]);
      const down = ([["core", c], ["parser", p]] as const).flatMap(([name, r]) =>
        "error" in r ? [[name, r.error] as const] : []
      );
      const shared = s ? { state: s } : {};
      if (!down.length) return { status: "ready", core: c, parser: p, ...shared, unavailable: [] };
      return {
        status: "not-ready",
        core: c,
        parser: p,
        ...shared,
        unavailable: down.map(([name]) => name),
        reason: down.map(([name, code]) => `${BACKEND_NAMES[name]} is not available (${code})`)
          .join("; "),
      };
    },
  };
}

/**
 * What to set when no backend is configured; `/readyz` and the start-up log both say it.
 */
export const NOTHING_CONFIGURED = "No backend is configured: set CORE_URL (with " +
  "PUBLIC_CORE_TOKEN or CORE_TOKEN) for the lore and the public site, and/or PARSER_URL (with " +
  "PARSER_INTERNAL_SECRET) for signed-in users and AI";

const BACKEND_NAMES = { core: "Core", parser: "Parser" } as const;
