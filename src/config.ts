/**
 * Configuration from environment variables, validated once at start-up. Invalid configuration
 * stops the process with one clear line per problem instead of failing on the first request.
 *
 * @module
 */
import { z } from "zod";

const intIn = (min: number, max: number, def: number) =>
  z.coerce.number().int().min(min).max(max).default(def);

const bool = (def: boolean) =>
  z.enum(["true", "false", "1", "0", "yes", "no"]).default(def ? "true" : "false")
    .transform((v) => v === "true" || v === "1" || v === "yes");

/** A backend base URL: http(s), no credentials, no query; trailing slashes removed. */
const backendUrl = z.url({ protocol: /^https?$/ })
  .refine((v) => {
    const u = new URL(v);
    return !u.username && !u.password && !u.search && !u.hash;
  }, "must be a plain http(s) URL without credentials, query or fragment")
  .transform((v) => v.replace(/\/+$/, ""));

/** A comma-separated list of backend URLs (extra allow-list entries). */
const urlList = z.string().transform((v, ctx) => {
  const out: string[] = [];
  for (const part of v.split(",").map((p) => p.trim()).filter(Boolean)) {
    const r = backendUrl.safeParse(part);
    if (!r.success) {
      ctx.addIssue({ code: "custom", message: `not a plain http(s) URL: ${JSON.stringify(part)}` });
      return z.NEVER;
    }
    out.push(r.data);
  }
  return out;
});

const noteId = z.string().regex(/^[A-Za-z0-9_]{1,128}$/, "must be a note id");

/** Every variable the service reads. README's configuration table documents each one. */
export const envSchema = z.object({
  PORT: intIn(0, 65535, 8080),
  HOST: z.string().min(1).default("127.0.0.1"),
  CORE_URL: backendUrl.optional(),
  CORE_TOKEN: z.string().min(1).optional(),
  PUBLIC_CORE_TOKEN: z.string().min(1).optional(),
  PARSER_URL: backendUrl.optional(),
  PARSER_TOKEN: z.string().min(1).optional(),
  PARSER_INTERNAL_SECRET: z.string().min(8).optional(),
  PARSER_ALLOWED_URLS: urlList.default([]),
  CORE_ALLOWED_URLS: urlList.default([]),
  SESSION_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  COOKIE_SECURE: z.enum(["auto", "always"]).default("auto"),
  ZERO_LOGIN: bool(false),
  PROVISION_COOLDOWN_MS: intIn(0, 3_600_000, 30_000),
  CREDENTIALS_CACHE_MS: intIn(0, 3_600_000, 60_000),
  AUTH_RATE_LIMIT: intIn(1, 10_000, 10),
  AUTH_RATE_WINDOW_MS: intIn(1000, 86_400_000, 60_000),
  ENABLE_WIPE: bool(false),
  DATA_DIR: z.string().min(1).default("./data"),
  LORE_ROOT_NOTE_ID: noteId.default("root"),
  MAX_JSON_BYTES: intIn(1024, 64 * 1024 * 1024, 1024 * 1024),
  MAX_CONTENT_BYTES: intIn(1024, 256 * 1024 * 1024, 5 * 1024 * 1024),
  MAX_UPLOAD_BYTES: intIn(1024, 1024 * 1024 * 1024, 20 * 1024 * 1024),
  UPSTREAM_TIMEOUT_MS: intIn(100, 600_000, 15_000),
  AI_TIMEOUT_MS: intIn(100, 3_600_000, 180_000),
  AI_TOTAL_TIMEOUT_MS: intIn(100, 3_600_000, 600_000),
  AI_RESULT_TTL_MS: intIn(0, 86_400_000, 900_000),
  STREAM_IDLE_TIMEOUT_MS: intIn(100, 600_000, 60_000),
  STREAM_TOTAL_TIMEOUT_MS: intIn(100, 3_600_000, 300_000),
  SSE_TOTAL_TIMEOUT_MS: intIn(100, 3_600_000, 900_000),
  MAX_UPSTREAM_BODY_BYTES: intIn(1024, 256 * 1024 * 1024, 16 * 1024 * 1024),
  UPSTREAM_CONCURRENCY: intIn(1, 64, 8),
  AUTOLINK_CACHE_MS: intIn(0, 3_600_000, 60_000),
  PUBLIC_CACHE_MS: intIn(0, 3_600_000, 5_000),
  MENTION_PARSER_BUDGET_MS: intIn(50, 60_000, 800),
  SHUTDOWN_GRACE_MS: intIn(0, 600_000, 10_000),
  CLIENT_HEADER_TIMEOUT_MS: intIn(100, 600_000, 15_000),
  CLIENT_BODY_TIMEOUT_MS: intIn(100, 600_000, 10_000),
  CLIENT_IDLE_TIMEOUT_MS: intIn(100, 3_600_000, 75_000),
  TRUST_PROXY: bool(false),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
}).superRefine((env, ctx) => {
  const coreToken = env.CORE_TOKEN ?? env.PUBLIC_CORE_TOKEN;
  if (!!env.CORE_URL !== !!coreToken) {
    ctx.addIssue({
      code: "custom",
      path: [env.CORE_URL ? "CORE_TOKEN" : "CORE_URL"],
      message: "CORE_URL needs CORE_TOKEN or PUBLIC_CORE_TOKEN, and they need CORE_URL",
    });
  }
  if (env.ZERO_LOGIN && !(env.PARSER_URL && env.PARSER_INTERNAL_SECRET)) {
    ctx.addIssue({
      code: "custom",
      path: ["ZERO_LOGIN"],
      message: "ZERO_LOGIN needs PARSER_URL and PARSER_INTERNAL_SECRET",
    });
  }
  // a total deadline shorter than the idle one would make the idle one meaningless
  for (const key of ["STREAM_TOTAL_TIMEOUT_MS", "SSE_TOTAL_TIMEOUT_MS"] as const) {
    if (env[key] < env.STREAM_IDLE_TIMEOUT_MS) {
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: "must be at least STREAM_IDLE_TIMEOUT_MS",
      });
    }
  }
  // an AI call runs on after its client stopped waiting: never for less than that wait
  if (env.AI_TOTAL_TIMEOUT_MS < env.AI_TIMEOUT_MS) {
    ctx.addIssue({
      code: "custom",
      path: ["AI_TOTAL_TIMEOUT_MS"],
      message: "must be at least AI_TIMEOUT_MS",
    });
  }
  if (!!env.PARSER_URL !== !!env.PARSER_TOKEN && env.PARSER_TOKEN) {
    ctx.addIssue({
      code: "custom",
      path: ["PARSER_URL"],
      message: "PARSER_TOKEN needs PARSER_URL",
    });
  }
});

/** The validated configuration. */
export type Config = z.output<typeof envSchema>;

/** Thrown by {@linkcode loadConfig}; `problems` holds one readable line per bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

/**
 * Validates an environment map. Empty strings count as unset, so `CORE_URL=` in a compose file
 * does not turn into an invalid URL.
 *
 * @example
 * ```ts
 * const config = loadConfig({ PORT: "3000", CORE_URL: "http://core:8080", CORE_TOKEN: "t" });
 * config.PORT; // 3000
 * ```
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v.trim() !== "") cleaned[key] = v.trim();
  }
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => `${i.path.join(".") || "env"}: ${i.message}`),
    );
  }
  return parsed.data;
}

/**
 * {@linkcode loadConfig} for entry points: an invalid configuration prints one line per problem
 * and exits with status 2 instead of a stack trace.
 *
 * @example
 * ```ts
 * const config = loadConfigOrExit(Deno.env.toObject());
 * ```
 */
export function loadConfigOrExit(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(e.message);
    Deno.exit(2);
  }
}
