/**
 * Configuration from environment variables, validated once at start-up. Invalid configuration
 * stops the process with one clear line per problem instead of failing on the first request.
 *
 * @module
 */
import { z } from "zod";
import {
  backendUrl,
  bool,
  hostList,
  intIn,
  noteId,
  originList,
  publicOrigin,
  splitList,
  stateUrl,
  urlList,
} from "./env_fields.ts";
import { backendBaseUrl } from "./backend_url.ts";

/**
 * Every variable the service reads. Each `.describe()` is the variable's meaning in the generated
 * configuration reference (`deno task docs`).
 */
export const envSchema = z.object({
  PORT: intIn(0, 65535, 8080)
    .describe("Listening port (`0`: any free port)."),
  HOST: z.string().min(1).default("127.0.0.1")
    .describe("Listening address. Set `0.0.0.0` to accept connections from other machines."),
  PUBLIC_ORIGIN: publicOrigin.optional()
    .describe(
      "The site's public origin, e.g. `https://lore.example.org`: the public site's absolute " +
        "URLs (canonical link, `og:url`, sitemap, feed, robots.txt's `Sitemap:`) use it " +
        "whatever a request's `Host` says, its host is accepted (see `ALLOWED_HOSTS`), and " +
        "pages on it pass the cross-site check. A request naming its host came with its scheme " +
        "(`Secure` cookies for `https`, see `COOKIE_SECURE`). Unset: absolute URLs use the host " +
        "the request named, once accepted.",
    ),
  ALLOWED_HOSTS: hostList.default([])
    .describe(
      "Comma-separated host names (no port) the service answers to besides `PUBLIC_ORIGIN`'s " +
        "host, IP addresses and `localhost`/`*.localhost`, which are always accepted, on any " +
        "port. A request naming any other host in `Host` (with `TRUST_PROXY`, in " +
        "`X-Forwarded-Host` too) is refused with 421 before any work: a page on a name someone " +
        "points at this service (DNS rebinding) must not pass for this site.",
    ),
  CORE_URL: backendUrl("core").optional()
    .describe(
      "Core base URL, e.g. `http://core:8080` (http or https; no credentials, query or " +
        "fragment). A trailing `/etapi`, as Core's own settings show the address, is removed " +
        "(and logged). Needs `CORE_TOKEN` or `PUBLIC_CORE_TOKEN`.",
    ),
  CORE_TOKEN: z.string().min(1).optional()
    .describe(
      "Core ETAPI token for callers without a signed-in session. With it, whoever reaches " +
        "the service can read and change the lore through it (a warning is logged at " +
        "start-up). Needs `CORE_URL`.",
    ),
  PUBLIC_CORE_TOKEN: z.string().min(1).optional()
    .describe(
      "Core ETAPI token used only by the public share routes and site (with `CORE_URL`), " +
        "and by `PORTAL_CONFIG_STORE=core` without `CORE_TOKEN`: publishes lore without " +
        "opening the private routes the way `CORE_TOKEN` does.",
    ),
  PARSER_URL: backendUrl("parser").optional()
    .describe(
      "Parser base URL, e.g. `http://parser:3001`: where its `/health` and `/api/auth/…` live, " +
        "so a path ending in one of its routes (`/api/auth`, `/health`) is refused (http or " +
        "https; no credentials, query or fragment).",
    ),
  PARSER_TOKEN: z.string().min(1).optional()
    .describe("Parser bearer token for callers without a signed-in session. Needs `PARSER_URL`."),
  PARSER_INTERNAL_SECRET: z.string().min(8).optional()
    .describe(
      "The Parser's `PORTAL_INTERNAL_SECRET`: lets the service fetch each signed-in user's " +
        "Core credentials from the Parser; zero-login needs it. Sent to `PARSER_URL` only.",
    ),
  PARSER_ALLOWED_URLS: urlList("parser").default([])
    .describe(
      "Comma-separated extra Parser base URLs a login or registration may name. No other " +
        "Parser is ever contacted.",
    ),
  CORE_ALLOWED_URLS: urlList("core").default([])
    .describe(
      "Comma-separated extra Core base URLs the Parser may hand out for a user, or a " +
        "connect may name.",
    ),
  SESSION_SECRET: z.string().min(32, "must be at least 32 characters").optional()
    .describe(
      "Key that seals the session cookies. Unset: generated once and kept in " +
        "`DATA_DIR/session-secret`. Set it when several instances share sessions; changing " +
        "it signs everyone out.",
    ),
  COOKIE_SECURE: z.enum(["auto", "always"]).default("auto")
    .describe(
      "`auto`: cookies are `Secure` when the browser came over HTTPS: on `PUBLIC_ORIGIN`'s " +
        "host when that is `https://…` (whatever a proxy reports), on any other host when the " +
        "request came over HTTPS (or `X-Forwarded-Proto: https` with `TRUST_PROXY`); " +
        "`always`: always.",
    ),
  ZERO_LOGIN: bool(false)
    .describe(
      "Mint a Parser session for a browser without one (development, single-user homelab). " +
        "Needs `PARSER_URL` and `PARSER_INTERNAL_SECRET`.",
    ),
  PROVISION_COOLDOWN_MS: intIn(0, 3_600_000, 30_000)
    .describe("After a failed zero-login provisioning, how long before trying again."),
  CREDENTIALS_CACHE_MS: intIn(0, 3_600_000, 60_000)
    .describe(
      "How long a session's Core credentials are cached (dropped early on logout, connect, " +
        "disconnect and a Core 401).",
    ),
  AUTH_RATE_LIMIT: intIn(1, 10_000, 10)
    .describe("Login, register and connect attempts per client address per window (429 beyond)."),
  AUTH_RATE_WINDOW_MS: intIn(1000, 86_400_000, 60_000)
    .describe("The window of `AUTH_RATE_LIMIT`."),
  ENABLE_WIPE: bool(false)
    .describe(
      "Allow `POST /api/config/wipe`, which deletes all lore and the Parser's semantic " +
        "index.",
    ),
  DATA_DIR: z.string().min(1).default("./data")
    .describe(
      "Where the service keeps its state files (`session-secret`, `portal.json`, the public " +
        "share's `public-share/`, the write journal's `writes/`); one per instance.",
    ),
  PORTAL_CONFIG_STORE: z.enum(["file", "core"]).default("file")
    .describe(
      "Where `PUT /api/config/portal` stores the lore root. `file`: `DATA_DIR/portal.json`, " +
        "seen by this instance only. `core`: a hidden note in Core (`#lorePortalConfig`), seen " +
        "by every instance on the same Core within 5 s; for several instances behind a load " +
        "balancer. Needs `CORE_URL` (written with `CORE_TOKEN`, else `PUBLIC_CORE_TOKEN`) " +
        "and `SESSION_SECRET`.",
    ),
  STATE_URL: stateUrl.optional()
    .describe(
      "A Redis (or Valkey) server that several instances share, e.g. " +
        "`redis://:password@state:6379/0` (`rediss://` for TLS): a logout ends the session on " +
        "every instance, the login, register and connect rate limit counts a client's " +
        "attempts across them, an AI call runs once whichever instance its retry " +
        "reaches, and a write shows on every instance's public pages within 250 ms while " +
        "Core is read for the share about as often as by one instance " +
        "(docs/instances.md). Unset: each instance keeps these in its own memory (the " +
        "start-up log says what several instances would lose). While the server does not " +
        "answer, requests that need it answer 503 `UNREACHABLE` (`service: state`).",
    ),
  STATE_TIMEOUT_MS: intIn(50, 60_000, 1000)
    .describe("Longest wait for one command to the `STATE_URL` server (then 503)."),
  LORE_ROOT_NOTE_ID: noteId.default("root")
    .describe(
      "The lore root: default parent of new lore notes, uploaded images, imports and " +
        "copilot creations, until `PUT /api/config/portal` stores another.",
    ),
  MAX_JSON_BYTES: intIn(1024, 64 * 1024 * 1024, 1024 * 1024)
    .describe("Largest JSON request body (413 above)."),
  MAX_CONTENT_BYTES: intIn(1024, 256 * 1024 * 1024, 5 * 1024 * 1024)
    .describe("Largest note content in `PUT /api/lore/:id/content` (413 above)."),
  MAX_UPLOAD_BYTES: intIn(1024, 1024 * 1024 * 1024, 20 * 1024 * 1024)
    .describe("Largest image upload (413 above, enforced while streaming)."),
  UPSTREAM_TIMEOUT_MS: intIn(100, 600_000, 15_000)
    .describe(
      "Deadline for a backend's response head (and body, when read whole); 504 after it. " +
        "AI routes use `AI_TIMEOUT_MS` instead.",
    ),
  AI_TIMEOUT_MS: intIn(100, 3_600_000, 180_000)
    .describe(
      "How long a client of an AI route waits without progress from the Parser; then 504 " +
        "while the call runs on and its answer is kept for a retry.",
    ),
  AI_TOTAL_TIMEOUT_MS: intIn(100, 3_600_000, 600_000)
    .describe(
      "Longest an AI call may run at all, background included; then it is cancelled and " +
        "its outcome is a 504. At least `AI_TIMEOUT_MS`.",
    ),
  AI_RESULT_TTL_MS: intIn(0, 86_400_000, 900_000)
    .describe(
      "How long the answer of an AI call whose client stopped waiting is kept for a retry " +
        "of the same request (`0`: not kept).",
    ),
  STREAM_IDLE_TIMEOUT_MS: intIn(100, 600_000, 60_000)
    .describe(
      "A streamed body (content, revisions, images, server-sent events) whose backend " +
        "sends nothing for this long is ended: a failed transfer, or a terminal SSE `error` " +
        "event.",
    ),
  STREAM_TOTAL_TIMEOUT_MS: intIn(100, 3_600_000, 300_000)
    .describe(
      "Longest life of a streamed content, revision or image body; then it is ended like a " +
        "stalled one. At least `STREAM_IDLE_TIMEOUT_MS`.",
    ),
  SSE_TOTAL_TIMEOUT_MS: intIn(100, 3_600_000, 900_000)
    .describe(
      "Longest life of an AI event stream (brain dump, copilot), context building " +
        "included; then it ends with a terminal `error` event. At least " +
        "`STREAM_IDLE_TIMEOUT_MS`.",
    ),
  MAX_UPSTREAM_BODY_BYTES: intIn(1024, 256 * 1024 * 1024, 16 * 1024 * 1024)
    .describe(
      "Largest backend answer read whole (JSON of both backends, note content for " +
        "previews, public pages and search); 502 above, read no further.",
    ),
  PUBLIC_SHARE_MAX_BYTES: intIn(1024, 1024 * 1024 * 1024, 256 * 1024 * 1024)
    .describe(
      "Largest Core answer the public share reads whole: it reads the whole shared subtree in " +
        "one search, about 4–5 KB a note with its attributes (13 MB for 3,000 notes); 502 " +
        "on public routes above.",
    ),
  UPSTREAM_CLIENT: z.enum(["fetch", "pooled"]).default("pooled")
    .describe(
      "How the service calls plain-http backends: `pooled`, its own HTTP/1.1 client with a " +
        "keep-alive pool per backend (a quarter less CPU per call and about 45 MiB less memory " +
        "under load than `fetch`); `fetch`, the runtime's client. `https` backends always use " +
        "`fetch`.",
    ),
  UPSTREAM_CONCURRENCY: intIn(1, 64, 8)
    .describe("Parallel backend calls one request may make."),
  AUTOLINK_CACHE_MS: intIn(0, 3_600_000, 60_000)
    .describe("How long the autolink title index is kept per caller."),
  PARSER_READ_CACHE_MS: intIn(0, 3_600_000, 30_000)
    .describe(
      "How long reads the Parser counts with its brain dumps (brain-dump history, entries, " +
        "diffs: 10 a minute for everyone behind this service) are kept per caller. The " +
        "caller's own brain dumps through this instance drop them at once; others show " +
        "within this time. 0 keeps nothing.",
    ),
  PUBLIC_CACHE_MS: intIn(0, 3_600_000, 5_000)
    .describe(
      "How long the public share snapshot is reused before Core is asked again. A write " +
        "through this instance drops it at once; changes made elsewhere show within this " +
        "time.",
    ),
  MENTION_PARSER_BUDGET_MS: intIn(50, 60_000, 800)
    .describe(
      "How long mention search waits for the Parser's suggestions before answering from " +
        "Core alone.",
    ),
  SHUTDOWN_GRACE_MS: intIn(0, 600_000, 10_000)
    .describe("On SIGTERM or SIGINT, how long requests in flight may finish."),
  CLIENT_HEADER_TIMEOUT_MS: intIn(100, 600_000, 15_000)
    .describe(
      "With `CLIENT_DEADLINES` on, a client must send a whole request head within this long " +
        "of its first byte, or the connection is closed (slowloris).",
    ),
  CLIENT_BODY_TIMEOUT_MS: intIn(100, 600_000, 10_000)
    .describe(
      "A request body (JSON, content, upload) that stalls this long (nothing arrives while " +
        "it is read) is 408; with `CLIENT_DEADLINES` on, the connection is closed too. Keep " +
        "it below `UPSTREAM_TIMEOUT_MS`. Like the two limits below, it counts only time spent " +
        "waiting for the client, never time the service waits on a backend.",
    ),
  CLIENT_BODY_MIN_BYTES_PER_SECOND: intIn(0, 100 * 1024 * 1024, 2048)
    .describe(
      "Least average rate of a request body over each `CLIENT_BODY_RATE_WINDOW_MS`, once " +
        "one window has passed; a body below it (one trickling a byte every few seconds) is " +
        "408, and a half-made upload is removed. The default, 16 kbit/s, is a thirtieth of a " +
        "512 kbit/s uplink. `0`: no minimum.",
    ),
  CLIENT_BODY_RATE_WINDOW_MS: intIn(1000, 600_000, 30_000)
    .describe(
      "The window `CLIENT_BODY_MIN_BYTES_PER_SECOND` is averaged over, and the grace period " +
        "before it applies: a body that completes within it is never judged by its rate.",
    ),
  CLIENT_BODY_TOTAL_TIMEOUT_MS: intIn(1000, 86_400_000, 3_600_000)
    .describe(
      "Longest a request body may take to arrive; then 408. The default, an hour, lets a " +
        "100 MiB upload through an uplink of 240 kbit/s (it takes 27 minutes at 512 kbit/s); " +
        "raise it with `MAX_UPLOAD_BYTES`.",
    ),
  MAX_BODIES_IN_FLIGHT: intIn(1, 100_000, 512)
    .describe(
      "Request bodies (JSON, content, uploads) received at once, all clients together; " +
        "beyond it 503 `SERVICE_BUSY` with `Retry-After`, before any byte is read. Bounds " +
        "what a flood of slow bodies can hold (an upload in progress holds about 100 KiB and " +
        "a call to Core).",
    ),
  MAX_BODIES_PER_CLIENT: intIn(1, 10_000, 16)
    .describe(
      "Request bodies received at once from one client address (behind a proxy, the " +
        "forwarded one with `TRUST_PROXY`, else the proxy's); beyond it 429 `RATE_LIMITED` " +
        "with `Retry-After`, before any byte is read. A browser has at most six connections " +
        "to a site over HTTP/1.1.",
    ),
  CLIENT_IDLE_TIMEOUT_MS: intIn(100, 3_600_000, 75_000)
    .describe(
      "With `CLIENT_DEADLINES` on, a connection with no request in progress (new or kept " +
        "alive) that sends nothing this long is closed. Keep it above a load balancer's idle " +
        "timeout.",
    ),
  CLIENT_DEADLINES: z.enum(["auto", "on", "off"]).default("auto")
    .describe(
      "Whether the service enforces `CLIENT_HEADER_TIMEOUT_MS` and `CLIENT_IDLE_TIMEOUT_MS` " +
        "itself, through a relay in front of the HTTP server that costs throughput. `auto`: " +
        "on unless `HOST` is a loopback address, where only a local reverse proxy reaches " +
        "the service and enforces its own client deadlines; `on`/`off`: always/never. " +
        "The request body limits (`CLIENT_BODY_*`) apply either way.",
    ),
  TRUST_PROXY: bool(false)
    .describe(
      "Trust a reverse proxy's `X-Forwarded-Host` and `X-Forwarded-Proto` (the origin the " +
        "browser used; the forwarded host must be accepted like `Host`, see `ALLOWED_HOSTS`) " +
        "and the last `X-Forwarded-For` entry (the client address for rate limits and " +
        "logs).",
    ),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info")
    .describe("Least severe log level written."),
  LOG_FORMAT: z.enum(["json", "combined"]).default("json")
    .describe(
      "`json`: one JSON line per request and event on standard output. `combined`: the " +
        "request lines in the Apache/nginx combined format on standard output (for goaccess, " +
        "fail2ban), everything else as JSON lines on standard error.",
    ),
  CORS_ORIGINS: originList.default([])
    .describe(
      "Comma-separated origins (e.g. `https://app.example.org`) whose pages may call the API " +
        "with the browser's cookies (CORS with credentials). Unset: same-origin only.",
    ),
}).superRefine((env, ctx) => {
  const coreToken = env.CORE_TOKEN ?? env.PUBLIC_CORE_TOKEN;
  if (!!env.CORE_URL !== !!coreToken) {
    ctx.addIssue({
      code: "custom",
      path: [env.CORE_URL ? "CORE_TOKEN" : "CORE_URL"],
      message: "CORE_URL needs CORE_TOKEN or PUBLIC_CORE_TOKEN, and they need CORE_URL",
    });
  }
  // the shared store exists for several instances, which must all seal cookies with one key
  if (env.PORTAL_CONFIG_STORE === "core" && !(env.CORE_URL && env.SESSION_SECRET)) {
    ctx.addIssue({
      code: "custom",
      path: ["PORTAL_CONFIG_STORE"],
      message: "core needs CORE_URL (with CORE_TOKEN or PUBLIC_CORE_TOKEN) and SESSION_SECRET",
    });
  }
  if (env.STATE_URL && !env.SESSION_SECRET) {
    ctx.addIssue({
      code: "custom",
      path: ["STATE_URL"],
      message: "a shared store needs SESSION_SECRET, the same on every instance",
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

/** The variables holding backend base URLs, and the backend each names. */
const BACKEND_URL_VARIABLES = [
  ["CORE_URL", "core"],
  ["CORE_ALLOWED_URLS", "core"],
  ["PARSER_URL", "parser"],
  ["PARSER_ALLOWED_URLS", "parser"],
] as const;

/**
 * What {@linkcode loadConfig} changed in a backend URL beyond formatting, one line per change
 * naming the variable (never the URL), for the start-up log.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const env = { CORE_URL: "http://core:8080/etapi", CORE_TOKEN: "t" };
 * assert.equal(loadConfig(env).CORE_URL, "http://core:8080");
 * assert.match(configNotes(env)[0], /^CORE_URL: the trailing \/etapi/);
 * ```
 */
export function configNotes(env: Record<string, string | undefined>): string[] {
  const notes: string[] = [];
  for (const [key, backend] of BACKEND_URL_VARIABLES) {
    for (const part of splitList(env[key] ?? "")) {
      const r = backendBaseUrl(backend, part);
      if (r.ok && r.note) notes.push(`${key}: ${r.note}`);
    }
  }
  return notes;
}

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
 * import assert from "node:assert/strict";
 * const config = loadConfig({ PORT: "3000", CORE_URL: "http://core:8080", CORE_TOKEN: "t" });
 * assert.equal(config.PORT, 3000);
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
 * import assert from "node:assert/strict";
 * // at start-up: loadConfigOrExit(Deno.env.toObject())
 * assert.equal(loadConfigOrExit({ PORT: "3000" }).PORT, 3000);
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
