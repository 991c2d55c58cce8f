/**
 * The Core conformance suite: every Core-backed route of the service, driven over HTTP against a
 * given Core, with the answers checked for shape and meaning. The service runs in-process, wired
 * to that Core through env credentials, with the scratch note as its lore root and its own
 * temporary data directory. Everything the suite creates lives under the scratch note
 * (`conformance-<tag>` under `root`), which is removed at the end, failure or not; the share
 * configuration is recorded first and put back exactly (`--share` is the only part that changes
 * it). The same suite runs against the Core double in `deno task test`.
 *
 * @module
 */
import { loadConfig } from "../../src/config/service_config.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import {
  captureShareState,
  createScratch,
  directCore,
  removeScratch,
  restoreShareState,
  shareStateDiff,
} from "./core_direct.ts";
import { type Flag, randomTag, serviceClient, type Step, type SuiteState } from "./kit.ts";
import { housekeeping, reasonOf, runStep, type StepResult, stepRow } from "./report.ts";
import { contentSteps } from "./steps_content.ts";
import { noteSteps } from "./steps_notes.ts";
import { quirkSteps } from "./steps_quirks.ts";
import { searchSteps } from "./steps_search.ts";
import { shareSteps } from "./steps_share.ts";

/** Every step, in run order (later steps use notes earlier ones made). */
export const STEPS: readonly Step[] = [
  ...noteSteps,
  ...contentSteps,
  ...searchSteps,
  ...quirkSteps,
  ...shareSteps,
];

export type { StepResult } from "./report.ts";

/** Where the Core under test is and what the run may do. */
export interface SuiteOptions {
  coreUrl: string;
  coreToken: string;
  flags: readonly Flag[];
  /** Aborting stops before the next step; the clean-up still runs. */
  signal?: AbortSignal;
  /**
   * How long a note with a pasted image is kept before the clean-up deletes it (default 6 s):
   * Core's image service re-reads it after 5 s and Core's process crashes if it is gone.
   */
  pasteSettleMs?: number;
}

/**
 * Runs the whole suite and returns one row per step plus the clean-up rows. Throws only when
 * the scratch note cannot even be created (then nothing was changed).
 */
export async function runCoreSuite(opts: SuiteOptions): Promise<StepResult[]> {
  const core = directCore(opts.coreUrl, opts.coreToken);
  const tag = randomTag();
  const rows: StepResult[] = [];
  const shareBefore = await captureShareState(core);
  const scratch = await createScratch(core, tag);
  let service: { server: RunningServer; dataDir: string } | undefined;
  let state: SuiteState | undefined;
  try {
    service = await startService(opts, scratch.noteId);
    state = {
      api: serviceClient(service.server.url),
      core,
      tag,
      scratch,
      flags: new Set(opts.flags),
      secrets: secretsOf(opts),
      notes: new Map(),
      facts: new Map(),
      keepUntil: 0,
      pasteSettleMs: opts.pasteSettleMs ?? 6_000,
    };
    for (const step of STEPS) {
      if (opts.signal?.aborted) {
        rows.push(stepRow(step, "skipped", "skipped (interrupted)"));
        continue;
      }
      rows.push(await runStep(step, state));
    }
  } catch (e) {
    rows.push({ method: "-", path: "(start the service)", result: "FAIL", reason: reasonOf(e) });
  } finally {
    rows.push(
      await housekeeping("(restore the share root)", () => restoreShareState(core, shareBefore)),
    );
    if (service) {
      await service.server.stop();
      await Deno.remove(service.dataDir, { recursive: true }).catch(() => {});
    }
    const wait = (state?.keepUntil ?? 0) - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    rows.push(
      await housekeeping(
        "(remove the scratch note)",
        () => removeScratch(core, scratch.noteId, tag),
      ),
    );
    rows.push(
      await housekeeping("(compare the share root)", async () => {
        const diff = shareStateDiff(shareBefore, await captureShareState(core));
        if (diff) throw new Error(diff);
        return "share configuration exactly as before the run";
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
 * assert.equal(coveredRoutes().has("GET /api/lore"), true);
 * ```
 */
export function coveredRoutes(): Set<string> {
  return new Set(STEPS.map((s) => `${s.method} ${s.path}`));
}

/** Everything that could leak Core's whereabouts or its token. */
function secretsOf(opts: SuiteOptions): string[] {
  const secret = opts.coreToken.split("_")[1];
  return [opts.coreUrl, new URL(opts.coreUrl).host, opts.coreToken, ...(secret ? [secret] : [])];
}

/**
 * The service in-process, configured as production would be from env credentials, with
 * short-lived caches off (each step must see Core's current state) and a data directory of its
 * own, so the portal config it writes touches no deployment.
 */
async function startService(
  opts: SuiteOptions,
  loreRootId: string,
): Promise<{ server: RunningServer; dataDir: string }> {
  const dataDir = await Deno.makeTempDir({ prefix: "core-conformance-" });
  try {
    const config = loadConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      CORE_URL: opts.coreUrl,
      CORE_TOKEN: opts.coreToken,
      DATA_DIR: dataDir,
      LORE_ROOT_NOTE_ID: loreRootId,
      PUBLIC_CACHE_MS: "0",
      AUTOLINK_CACHE_MS: "0",
      LOG_LEVEL: "silent",
      // the suite can judge either upstream client against a real Core
      UPSTREAM_CLIENT: Deno.env.get("UPSTREAM_CLIENT"),
    });
    return { server: await startServer({ config }), dataDir };
  } catch (e) {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    throw e;
  }
}
