/**
 * The Parser conformance suite: every Parser-backed route of the service (and the Parser half of
 * the mixed ones), plus sign-in, zero-login and the per-user Core credentials, driven over HTTP
 * against a given Parser and the Core it is connected to, with the answers checked for shape and
 * effect (never for the model's exact words). The service runs in-process the production way:
 * `PARSER_URL` and `PARSER_INTERNAL_SECRET`, no backend tokens, a browser session from logging in
 * with the owner account, Core credentials handed out by the Parser.
 *
 * Everything the suite writes lives in a scratch note in Core (`conformance-<tag>` under `root`,
 * also the service's lore root), which is removed at the end, failure or not; notes the Parser
 * writes under its own lore root are moved into it as they appear. The owner's budgets and stored
 * Core integration are recorded first, put back, and compared; `--integration` (disconnecting
 * and reconnecting Core) is the only part that changes the integration. The same suite runs
 * against the Parser and Core doubles in `deno task test`.
 *
 * @module
 */
import { loadConfig } from "../../src/config/service_config.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import {
  adoptNote,
  createScratch,
  deleteIfPresent,
  directCore,
  removeScratch,
} from "./core_direct.ts";
import { randomTag, type ServiceClient, serviceClient, type Step, type SuiteState } from "./kit.ts";
import {
  captureOwnerSettings,
  type DirectParser,
  notesCreatedFor,
  type OwnerSettings,
  ownerSettingsDiff,
  restoreOwnerSettings,
  signInDirect,
} from "./parser_direct.ts";
import { authSteps } from "./parser_steps_auth.ts";
import { brainDumpSteps } from "./parser_steps_brain_dump.ts";
import { aiSteps } from "./parser_steps_ai.ts";
import { toolSteps } from "./parser_steps_tools.ts";
import { housekeeping, reasonOf, runStep, type StepResult, stepRow } from "./report.ts";

/** Optional parts of the Parser suite (they change the owner's settings for a moment). */
export const PARSER_FLAGS = ["integration"] as const;

/** One of {@linkcode PARSER_FLAGS}. */
export type ParserFlag = typeof PARSER_FLAGS[number];

/** Another instance of the service under test (zero-login, wipe enabled, …). */
export interface OtherService {
  api: ServiceClient;
  stop(): Promise<void>;
}

/** Everything a Parser step can use. */
export interface ParserSuiteState extends SuiteState {
  /** The Parser's own API with the suite's owner session (set-ups and restores only). */
  parser: DirectParser;
  parserUrl: string;
  internalSecret: string;
  owner: { email: string; password: string };
  /** A capitalised word made of the tag's letters: the name in every text the suite sends. */
  name: string;
  /** The owner's settings before the run (the Core integration for the connect steps). */
  before: OwnerSettings;
  /** Notes the Parser created for the run; moved into the scratch note as they appear. */
  written: Set<string>;
  /** Longest wait for a batch to finish. */
  batchWaitMs: number;
  /** How often a batch's status is read while waiting on it. */
  batchPollMs: number;
  /** A new browser (its own cookie jar) on the service under test. */
  newBrowser(): ServiceClient;
  /** Starts another instance of the service with these settings over the run's. */
  startService(env: Record<string, string>): Promise<OtherService>;
}

/** A Parser step; `anonymous` steps run before the suite has signed in. */
export type ParserStep = Step<ParserSuiteState, ParserFlag> & { anonymous?: true };

/** Every step, in run order (later steps use what earlier ones made). */
export const PARSER_STEPS: readonly ParserStep[] = [
  ...authSteps,
  ...brainDumpSteps,
  ...aiSteps,
  ...toolSteps,
];

/** Where the Parser (and its Core) under test are and what the run may do. */
export interface ParserSuiteOptions {
  parserUrl: string;
  internalSecret: string;
  /** The Parser's owner account (the only one its guarded routes accept). */
  owner: { email: string; password: string };
  /** The Core the Parser is connected to, for the scratch note. */
  coreUrl: string;
  coreToken: string;
  flags: readonly ParserFlag[];
  /** Aborting stops before the next step; the clean-up still runs. */
  signal?: AbortSignal;
  /** Longest wait for one rate-limited call (default 130 s: the Parser's windows are a minute). */
  rateLimitWaitMs?: number;
  /** Longest wait for a batch to finish (default 120 s; the Parser's worker polls every 2 s). */
  batchWaitMs?: number;
  /**
   * How often a batch's status is read while waiting on it (default 1 s; a double whose worker
   * polls faster can be read as often, so the run waits for the batch, not for the next read).
   */
  batchPollMs?: number;
}

/**
 * Runs the whole suite and returns one row per step plus the clean-up rows. Throws only when it
 * cannot start (the owner cannot sign in, has no Core connected, or the scratch note cannot be
 * made); then nothing was changed.
 */
export async function runParserSuite(opts: ParserSuiteOptions): Promise<StepResult[]> {
  const core = directCore(opts.coreUrl, opts.coreToken);
  const parser = await signInDirect(opts.parserUrl, opts.owner.email, opts.owner.password);
  const rows: StepResult[] = [];
  let before: OwnerSettings;
  let scratch: { noteId: string; title: string };
  const tag = randomTag();
  try {
    before = await captureOwnerSettings(parser, opts.internalSecret);
    if (!before.integration) throw new Error("the owner account has no Core connected");
    scratch = await createScratch(core, tag);
  } catch (e) {
    await parser.signOut().catch(() => {});
    throw e;
  }
  const others: OtherService[] = [];
  let main: { server: RunningServer; dataDir: string } | undefined;
  let state: ParserSuiteState | undefined;
  // no Core of its own: the service may use the Core address the Parser stores for the owner
  const baseEnv = {
    PARSER_URL: opts.parserUrl,
    PARSER_INTERNAL_SECRET: opts.internalSecret,
    CORE_ALLOWED_URLS: before.integration.baseUrl,
    LORE_ROOT_NOTE_ID: scratch.noteId,
  };
  const clientOptions = { cookies: true, rateLimitWaitMs: opts.rateLimitWaitMs ?? 130_000 };
  try {
    main = await startService(baseEnv);
    const mainUrl = main.server.url;
    state = {
      api: serviceClient(mainUrl, clientOptions),
      core,
      parser,
      parserUrl: opts.parserUrl,
      internalSecret: opts.internalSecret,
      owner: opts.owner,
      tag,
      name: nameOf(tag),
      scratch,
      before,
      flags: new Set(opts.flags),
      secrets: secretsOf(opts, before),
      notes: new Map(),
      facts: new Map(),
      written: new Set(),
      keepUntil: 0,
      pasteSettleMs: 0,
      batchWaitMs: opts.batchWaitMs ?? 120_000,
      batchPollMs: opts.batchPollMs ?? 1_000,
      newBrowser: () => serviceClient(mainUrl, clientOptions),
      startService: async (env) => {
        const other = await startService({ ...baseEnv, ...env });
        const handle = {
          api: serviceClient(other.server.url, clientOptions),
          stop: async () => {
            others.splice(others.indexOf(handle), 1);
            await stopService(other);
          },
        };
        others.push(handle);
        return handle;
      },
    };
    for (const step of PARSER_STEPS) {
      if (opts.signal?.aborted) {
        rows.push(stepRow(step, "skipped", "skipped (interrupted)"));
      } else if (!step.anonymous && !state.api.cookies.has("parser_token")) {
        rows.push(stepRow(step, "FAIL", "blocked: needs the login of POST /api/auth/login"));
      } else {
        rows.push(await runStep(step, state));
        await adoptWritten(state);
      }
    }
  } catch (e) {
    rows.push({ method: "-", path: "(start the service)", result: "FAIL", reason: reasonOf(e) });
  } finally {
    if (state?.api.cookies.has("parser_token")) {
      const api = state.api;
      rows.push(
        await housekeeping("(log out)", async () => {
          const a = await api.call("POST", "/api/auth/logout");
          if (a.status !== 200) throw new Error(`logout: status ${a.status}`);
          return "the suite's browser session ended at the Parser";
        }),
      );
    }
    for (const other of [...others]) await other.stop();
    if (main) await stopService(main);
    rows.push(
      await housekeeping(
        "(restore the owner's settings)",
        () => restoreOwnerSettings(parser, opts.internalSecret, before),
      ),
    );
    rows.push(
      await housekeeping("(remove the Parser's notes)", async () => {
        const ids = new Set([...state?.written ?? [], ...await notesCreatedFor(parser, tag)]);
        let outside = 0;
        for (const id of ids) {
          try {
            await adoptNote(core, id, scratch.noteId);
          } catch {
            // it cannot join the scratch note: delete it where it is
            if (await deleteIfPresent(core, id).catch(() => false)) outside++;
          }
        }
        return `${ids.size} note(s) the Parser created for the run` +
          (outside ? `, ${outside} deleted outside the scratch note` : ", all in the scratch note");
      }),
    );
    rows.push(
      await housekeeping(
        "(remove the scratch note)",
        () => removeScratch(core, scratch.noteId, tag),
      ),
    );
    rows.push(
      await housekeeping("(compare the owner's settings)", async () => {
        const diff = ownerSettingsDiff(
          before,
          await captureOwnerSettings(parser, opts.internalSecret),
        );
        await parser.signOut();
        if (diff) throw new Error(diff);
        return "budgets and Core integration exactly as before the run; suite's session ended";
      }),
    );
  }
  return rows;
}

/**
 * The routes a suite run covers, as `METHOD path` keys (for the coverage test).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(parserCoveredRoutes().has("POST /api/brain-dump"), true);
 * ```
 */
export function parserCoveredRoutes(): Set<string> {
  return new Set(PARSER_STEPS.map((s) => `${s.method} ${s.path}`));
}

/**
 * A capitalised word made of the tag's letters (digits become letters): models name entities
 * after such words, so the run's notes can be told apart.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(nameOf("q3k9x0ab7z"), "Qdkjxaabhz");
 * ```
 */
export function nameOf(tag: string): string {
  const letters = tag.replace(/\d/g, (d) => "abcdefghij"[Number(d)]);
  return letters[0].toUpperCase() + letters.slice(1);
}

/** Moves the notes the Parser wrote for the run into the scratch note. */
async function adoptWritten(s: ParserSuiteState): Promise<void> {
  for (const id of s.written) {
    await adoptNote(s.core, id, s.scratch.noteId).catch(() => {}); // the clean-up tries again
  }
}

/** Everything that could leak a backend's whereabouts, a token or the internal secret. */
function secretsOf(opts: ParserSuiteOptions, before: OwnerSettings): string[] {
  const hosts = [opts.parserUrl, opts.coreUrl, before.integration?.baseUrl ?? ""]
    .filter(Boolean).flatMap((u) => [u, new URL(u).host]);
  return [...hosts, opts.internalSecret, opts.coreToken, before.integration?.token ?? ""]
    .filter((v) => v.length >= 6);
}

/**
 * The service in-process, configured as production would be (no backend tokens, Core
 * credentials from the Parser), with a data directory of its own, no short-lived caches and its
 * own login limit out of the way (the suite logs in several times).
 */
async function startService(
  env: Record<string, string>,
): Promise<{ server: RunningServer; dataDir: string }> {
  const dataDir = await Deno.makeTempDir({ prefix: "parser-conformance-" });
  try {
    const config = loadConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      DATA_DIR: dataDir,
      PUBLIC_CACHE_MS: "0",
      AUTOLINK_CACHE_MS: "0",
      AUTH_RATE_LIMIT: "1000",
      LOG_LEVEL: "silent",
      ...env,
    });
    return { server: await startServer({ config }), dataDir };
  } catch (e) {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    throw e;
  }
}

async function stopService(s: { server: RunningServer; dataDir: string }): Promise<void> {
  await s.server.stop();
  await Deno.remove(s.dataDir, { recursive: true }).catch(() => {});
}
