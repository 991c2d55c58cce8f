/**
 * The Parser's own API, called directly by the Parser conformance suite for what must not depend
 * on the service under test: a session of the owner account, the owner's settings the run may
 * change (budgets and the stored Core integration), recorded first and put back exactly, the
 * brain-dump history the clean-up reads to find the notes the Parser wrote, and whether the
 * Parser provisions zero-login sessions at all.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { short } from "./kit.ts";

/** The Parser at one base URL, with a session of the owner account. */
export interface DirectParser {
  readonly baseUrl: string;
  /** The owner's user id. */
  readonly userId: string;
  /** Parsed JSON of a 2xx answer; a rate limit is waited out; otherwise throws naming the status. */
  json<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    opts?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<z.output<S>>;
  /** Ends the suite's own session (its row in the Parser is deleted). */
  signOut(): Promise<void>;
}

/** Per call: a stalled Parser fails the call, never the clean-up after it. */
const PARSER_TIMEOUT_MS = 30_000;

/** Longest total wait for one rate-limited call (the Parser's windows are a minute). */
const RATE_LIMIT_WAIT_MS = 130_000;

interface Sent {
  status: number;
  headers: Headers;
  text: string;
}

async function send(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Sent> {
  const deadline = Date.now() + RATE_LIMIT_WAIT_MS;
  for (;;) {
    const res = await fetch(baseUrl + path, {
      method,
      headers: {
        ...headers,
        // better-auth refuses POSTs from untrusted origins; the Parser's own URL is trusted
        origin: baseUrl,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(PARSER_TIMEOUT_MS),
    });
    const sent = { status: res.status, headers: res.headers, text: await res.text() };
    const wait = Number(res.headers.get("retry-after")) * 1000;
    if (res.status !== 429 || !(wait > 0) || Date.now() + wait > deadline) return sent;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

function failure(method: string, path: string, a: Sent): Error {
  return new Error(`Parser ${method} ${path.split("?")[0]}: ${a.status} ${short(a.text, 120)}`);
}

/**
 * Signs the owner in at the Parser (better-auth email sign-in) and returns a client with that
 * session. Throws when the account cannot sign in.
 */
export async function signInDirect(
  baseUrl: string,
  email: string,
  password: string,
): Promise<DirectParser> {
  const path = "/api/auth/sign-in/email";
  const a = await send(baseUrl, "POST", path, {}, { email, password });
  if (a.status !== 200) throw failure("POST", path, a);
  const { token, user } = z.object({
    token: z.string().min(1),
    user: z.looseObject({ id: z.string() }),
  }).parse(JSON.parse(a.text));
  const auth = { authorization: `Bearer ${token}` };
  return {
    baseUrl,
    userId: user.id,
    async json(method, path, schema, opts = {}) {
      const a = await send(baseUrl, method, path, { ...auth, ...opts.headers }, opts.body);
      if (a.status < 200 || a.status > 299) throw failure(method, path, a);
      return schema.parse(a.text ? JSON.parse(a.text) : undefined);
    },
    async signOut() {
      const a = await send(baseUrl, "POST", "/api/auth/sign-out", auth, {});
      if (a.status !== 200) throw failure("POST", "/api/auth/sign-out", a);
    },
  };
}

/**
 * Whether the Parser refuses zero-login provisioning outright (it answers 404 when it runs with
 * `NODE_ENV=production`). Asks with a wrong secret, so nothing is ever minted.
 */
export async function provisioningDisabled(baseUrl: string): Promise<boolean> {
  const a = await send(baseUrl, "POST", "/internal/auto-provision", {
    "x-portal-internal-secret": `not-the-secret-${crypto.randomUUID()}`,
  });
  return a.status === 404;
}

// ---------------------------------------------------------------------------------------------
// The owner's settings a run may change
// ---------------------------------------------------------------------------------------------

const budgetsSchema = z.object({
  dailyBudgetUsd: z.number().nullable(),
  monthlyBudgetUsd: z.number().nullable(),
  alertEmail: z.string().nullable(),
});

const credentialsSchema = z.object({ baseUrl: z.string(), token: z.string() });

/** The owner's budgets and stored Core integration, as the Parser holds them. */
export interface OwnerSettings {
  budgets: z.output<typeof budgetsSchema>;
  /** The Core credentials the Parser hands out for the owner, or null when none are stored. */
  integration: z.output<typeof credentialsSchema> | null;
}

/**
 * Records the owner's budgets and Core integration (the latter through the Parser's internal
 * credentials route, so `secret` is the Parser's internal secret).
 */
export async function captureOwnerSettings(
  parser: DirectParser,
  secret: string,
): Promise<OwnerSettings> {
  const budgets = await parser.json("GET", "/usage/budgets", budgetsSchema);
  let integration: OwnerSettings["integration"] = null;
  try {
    integration = await parser.json(
      "POST",
      "/internal/integrations/allcodex/credentials",
      credentialsSchema,
      { headers: { "x-portal-internal-secret": secret } },
    );
  } catch (e) {
    if (!/: 404 /.test(e instanceof Error ? e.message : "")) throw e;
  }
  return { budgets, integration };
}

/**
 * Puts the owner's budgets and Core integration back as recorded when they differ; returns a
 * sentence saying what was done.
 */
export async function restoreOwnerSettings(
  parser: DirectParser,
  secret: string,
  before: OwnerSettings,
): Promise<string> {
  const now = await captureOwnerSettings(parser, secret);
  const fixed: string[] = [];
  if (!isDeepStrictEqual(now.budgets, before.budgets)) {
    await parser.json("PUT", "/usage/budgets", z.unknown(), { body: before.budgets });
    fixed.push("budgets put back");
  }
  if (!isDeepStrictEqual(now.integration, before.integration)) {
    if (before.integration) {
      await parser.json("POST", "/integrations/allcodex/connect", z.unknown(), {
        body: before.integration,
      });
    } else {
      await parser.json("DELETE", "/integrations/allcodex", z.unknown());
    }
    fixed.push("Core integration put back");
  }
  return fixed.length ? fixed.join("; ") : "budgets and Core integration untouched";
}

/**
 * What differs between two recorded settings (never showing the Core token), or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const budgets = { dailyBudgetUsd: null, monthlyBudgetUsd: 20, alertEmail: null };
 * const before = { budgets, integration: null };
 * assert.equal(ownerSettingsDiff(before, before), null);
 * assert.equal(
 *   ownerSettingsDiff(before, { budgets: { ...budgets, monthlyBudgetUsd: 5 }, integration: null }),
 *   'budgets {"dailyBudgetUsd":null,"monthlyBudgetUsd":20,"alertEmail":null} became ' +
 *     '{"dailyBudgetUsd":null,"monthlyBudgetUsd":5,"alertEmail":null}',
 * );
 * ```
 */
export function ownerSettingsDiff(before: OwnerSettings, after: OwnerSettings): string | null {
  const out: string[] = [];
  if (!isDeepStrictEqual(before.budgets, after.budgets)) {
    out.push(`budgets ${JSON.stringify(before.budgets)} became ${JSON.stringify(after.budgets)}`);
  }
  if (before.integration?.baseUrl !== after.integration?.baseUrl) {
    out.push(`Core URL ${before.integration?.baseUrl} became ${after.integration?.baseUrl}`);
  }
  if (before.integration?.token !== after.integration?.token) out.push("Core token changed");
  return out.length ? out.join("; ") : null;
}

// ---------------------------------------------------------------------------------------------
// Brain-dump history (clean-up)
// ---------------------------------------------------------------------------------------------

const historySchema = z.object({
  items: z.array(z.looseObject({
    rawText: z.string(),
    notesCreated: z.array(z.string()),
  })),
});

/**
 * The notes the Parser created for brain dumps whose text contains `tag` (the newest 100 of the
 * owner's brain dumps are read: a run makes far fewer). Updated notes are not listed: they were
 * someone's before the run.
 */
export async function notesCreatedFor(parser: DirectParser, tag: string): Promise<string[]> {
  const { items } = await parser.json("GET", "/brain-dump/history?limit=100", historySchema);
  return items.filter((i) => i.rawText.includes(tag)).flatMap((i) => i.notesCreated);
}
