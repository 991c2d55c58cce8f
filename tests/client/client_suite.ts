/**
 * The run of `deno task test:client`: checks that the UI answers, starts the development stack
 * (the service on the Core and Parser doubles, as `deno task dev` runs it) where the UI sends
 * `/api/*`, checks that the UI's `/api/*` reaches it, then drives Chromium through every page and
 * the main journeys, one row per step, and stops everything it started.
 *
 * @module
 */
import type { StepResult } from "../conformance/report.ts";
import { randomTag } from "../conformance/kit.ts";
import { withBrowser } from "../helpers/browser.ts";
import { type DevStack, startDevStack } from "../../sims/dev_stack.ts";
import { DEFAULT_OWNER } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";
import { type ClientFlag, type ClientState, type ClientStep, runClientStep } from "./client_kit.ts";
import { AI_JOURNEYS } from "./journeys_ai.ts";
import { LORE_JOURNEYS } from "./journeys_lore.ts";
import { SETTINGS_JOURNEYS } from "./journeys_settings.ts";
import { STUDIO_JOURNEYS } from "./journeys_studio.ts";
import { watch } from "./monitor.ts";
import { VISITS } from "./visits.ts";

/** Where the UI runs and where it sends `/api/*`. */
export interface ClientSettings {
  /** The UI's origin, without a trailing slash. */
  portalUrl: string;
  /** Where the UI sends `/api/*` (the address the run starts the service on). */
  bffUrl: string;
}

/** Every step, in the order they run: the visits, then the journeys (settings last). */
export const CLIENT_STEPS: readonly ClientStep[] = [
  ...VISITS,
  ...LORE_JOURNEYS,
  ...STUDIO_JOURNEYS,
  ...AI_JOURNEYS,
  ...SETTINGS_JOURNEYS,
];

/**
 * The service's environment for a run: the caller's, with the address the UI sends `/api/*` to,
 * `TRUST_PROXY` (the UI's server forwards the browser's Origin and `X-Forwarded-Host`),
 * zero-login (the UI has no login page of its own), a fresh `DATA_DIR` and a quiet log.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const settings = { portalUrl: "http://127.0.0.1:3100", bffUrl: "http://127.0.0.1:8080" };
 * const env = serviceEnv(settings, { ZERO_LOGIN: "false" }, "/tmp/run");
 * assert.deepEqual(
 *   [env.HOST, env.PORT, env.TRUST_PROXY, env.ZERO_LOGIN, env.DATA_DIR, env.LOG_LEVEL],
 *   ["127.0.0.1", "8080", "true", "true", "/tmp/run", "warn"],
 * );
 * assert.deepEqual([env.PUBLIC_ORIGIN, env.ALLOWED_HOSTS], ["http://127.0.0.1:8080", "127.0.0.1"]);
 * ```
 */
export function serviceEnv(
  settings: ClientSettings,
  env: Record<string, string | undefined>,
  dataDir: string,
): Record<string, string | undefined> {
  const bff = new URL(settings.bffUrl);
  const portal = new URL(settings.portalUrl);
  const bare = (url: URL) => url.hostname.replace(/^\[|\]$/g, ""); // IPv6 without brackets
  return {
    ...env,
    LOG_LEVEL: env.LOG_LEVEL ?? "warn",
    HOST: bare(bff),
    PORT: bff.port || "80",
    // Next's rewrite forwards the browser's Origin and X-Forwarded-Host: the UI's origin
    TRUST_PROXY: "true",
    // the UI forwards /api/* only: the public site and the share links live on our own origin,
    // and the UI's host is one we answer to
    PUBLIC_ORIGIN: env.PUBLIC_ORIGIN ?? bff.origin,
    ALLOWED_HOSTS: bare(portal),
    ZERO_LOGIN: "true",
    DATA_DIR: dataDir,
  };
}

/**
 * Runs every step against the UI at `portalUrl`; throws only when it cannot start (then nothing
 * is left running). `onStep` sees each row as it is made, with the details of a failure.
 */
export async function runClientSuite(opts: {
  settings: ClientSettings;
  flags: readonly ClientFlag[];
  env: Record<string, string | undefined>;
  signal: AbortSignal;
  onStep?: (row: StepResult, details: readonly string[]) => void;
}): Promise<StepResult[]> {
  const { portalUrl, bffUrl } = opts.settings;
  await expectAnswer(
    `${portalUrl}/`,
    `PORTAL_URL ${portalUrl} does not answer: is the UI running?`,
  );
  const dataDir = await Deno.makeTempDir({ prefix: "test-client-" });
  let stack: DevStack;
  try {
    stack = await startDevStack(serviceEnv(opts.settings, opts.env, dataDir));
  } catch (e) {
    await Deno.remove(dataDir, { recursive: true });
    if (e instanceof Deno.errors.AddrInUse) {
      throw new Error(
        `${bffUrl} is in use: stop what listens there (a \`deno task dev\`?) and run again`,
      );
    }
    throw e;
  }
  try {
    await expectAnswer(
      `${portalUrl}/api/openapi.json`,
      `the UI at ${portalUrl} does not send /api/* to ${bffUrl} (build it with that address)`,
    );
    const rows: StepResult[] = [];
    await withBrowser(async (browser) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const state: ClientState = {
        page,
        monitor: watch(page, portalUrl),
        portalUrl,
        serviceUrl: stack.server.url,
        core: { url: stack.core.url, token: stack.core.token, store: stack.core.store },
        account: { email: DEFAULT_OWNER.email, password: DEFAULT_OWNER.password },
        tag: randomTag(),
        flags: new Set(opts.flags),
        notes: new Map([["mira", {
          noteId: W.charMira,
          title: stack.core.store.getNote(W.charMira)!.title,
        }]]),
        facts: new Map(),
      };
      for (const step of CLIENT_STEPS) {
        if (opts.signal.aborted) {
          rows.push({
            method: step.page,
            path: step.journey,
            result: "skipped",
            reason: "skipped (interrupted)",
          });
          continue;
        }
        const { row, details } = await runClientStep(step, state);
        rows.push(row);
        opts.onStep?.(row, details);
      }
      await context.close();
    });
    return rows;
  } finally {
    await stack.stop();
    await Deno.remove(dataDir, { recursive: true });
  }
}

/** Fails with `message` unless `url` answers 2xx (its body is read and dropped). */
async function expectAnswer(url: string, message: string): Promise<void> {
  let status: number | string;
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    await r.body?.cancel();
    status = r.status;
  } catch (e) {
    status = e instanceof Error ? e.message : String(e);
  }
  if (typeof status !== "number" || status >= 300) {
    throw new Error(`${message} (GET ${url}: ${status})`);
  }
}
