/**
 * The front end's contract for settings, accounts and errors: each call the Settings page (and
 * the pages that share its calls) makes, sent as the browser sends it from the UI's own origin,
 * and the fields the page reads from our answer, checked over HTTP against the doubles. The UI
 * file and function making each call are named beside each test; calls only the older UI
 * (branch `main`) makes are marked so.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, REFUSED_URL, withHarness } from "../helpers/harness.ts";
import { type CookieJar, cookieJar, pageFetch } from "../helpers/cookie_jar.ts";
import { DEFAULT_CORE_PASSWORD } from "../../sims/core.ts";
import { DEFAULT_OWNER } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";

/** One backend's card on the Settings page, as it reads `GET /api/config/status`. */
interface BackendCard {
  ok: boolean;
  configured: boolean;
  url: string | null;
  version?: string;
  error?: string;
}
interface StatusPayload {
  allcodex: BackendCard;
  allknower: BackendCard;
}

/** What every error answer must be for the UI's banner (lib/fetch-json.ts isRouteErrorPayload). */
interface RouteErrorPayload {
  error: string;
  message: string;
}

const JSON_HEADERS = { "Content-Type": "application/json" };
const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: JSON_HEADERS,
  body: JSON.stringify(body),
});

/** The card states the Settings page and the dashboard derive (StatusBadge). */
const cardState = (c: BackendCard) => c.ok ? "connected" : c.configured ? "error" : "disconnected";

/** `GET /api/config/status` as the Settings page reads it. */
async function status(h: Harness, jar: CookieJar): Promise<StatusPayload> {
  const r = await pageFetch<StatusPayload>(h, jar, "/api/config/status");
  assert.equal(r.status, 200);
  for (const card of [r.body.allcodex, r.body.allknower]) {
    assert.equal(typeof card.ok, "boolean");
    assert.equal(typeof card.configured, "boolean");
    assert.ok(card.version === undefined || typeof card.version === "string");
    assert.ok(card.error === undefined || typeof card.error === "string");
  }
  return r.body;
}

/** The UI's error reading: `error` and `message` strings (shown as "Error: <error>" in forms). */
function assertRouteError(body: unknown): asserts body is RouteErrorPayload {
  const b = body as Partial<RouteErrorPayload>;
  assert.equal(typeof b.error, "string", JSON.stringify(body));
  assert.equal(typeof b.message, "string", JSON.stringify(body));
}

/** The service as `deno task dev` runs it: zero-login, Core credentials from the Parser. */
const DEV_LIKE = { parser: true, env: { ZERO_LOGIN: "true" } } as const;
/** Login required: the Parser is configured, zero-login is off, no server credentials. */
const LOGIN_FIRST = { parser: true, noCoreCredentials: true } as const;

Deno.test("status: both backends up → both cards connected, with our own origin as their url", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx SettingsPage.fetchStatus (and the cards' initial state),
    // app/(portal)/page.tsx DashboardPage (getServiceState), components/portal/ShareSettings.tsx
    const jar = cookieJar();
    const res = await h.request("/api/config/status", {
      headers: { "sec-fetch-site": "same-origin" },
    });
    jar.apply(res.headers.getSetCookie());
    const text = await res.text();
    const s = JSON.parse(text) as StatusPayload;
    assert.deepEqual([cardState(s.allcodex), cardState(s.allknower)], ["connected", "connected"]);
    // the badge shows "Connected · v<version>" for AllCodex
    assert.equal(typeof s.allcodex.version, "string");
    // the url the cards show and send back, and ShareSettings builds share links on: ours
    assert.equal(s.allcodex.url, h.url);
    assert.equal(s.allknower.url, h.url);
    for (const backend of [h.core.url, h.parser!.url]) {
      assert.ok(!text.includes(new URL(backend).host), `${backend} leaked`);
    }
    assertNoSecrets(h, text);
  }, DEV_LIKE));

Deno.test("status: PUBLIC_ORIGIN is the url the cards get", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx SettingsPage.fetchStatus
    const s = await status(h, cookieJar());
    assert.equal(s.allcodex.url, "https://lore.example.org");
    assert.equal(s.allknower.url, "https://lore.example.org");
  }, { ...DEV_LIKE, env: { ...DEV_LIKE.env, PUBLIC_ORIGIN: "https://lore.example.org" } }));

Deno.test("status: a backend that fails is an error card with a reason; a missing one is disconnected", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx AllCodexCard: state "error", then `status.allcodex.error`
    h.core.fault({ path: "/etapi/app-info", status: 500 });
    const s = await status(h, cookieJar());
    assert.equal(cardState(s.allcodex), "error");
    assert.equal(s.allcodex.error, "UPSTREAM_ERROR");
    // no Parser login and zero-login off: AllKnower shows "Disconnected" and its login form
    assert.equal(cardState(s.allknower), "disconnected");
  }, { parser: true }));

Deno.test("AllKnower card: login with the status url signs in; a wrong password is an error string", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx AllKnowerCard.handleLogin: POST /api/auth/login
    // { url, email, password } with `url` prefilled from the status answer; reads `error` only
    const jar = cookieJar();
    const before = await status(h, jar);
    assert.equal(cardState(before.allknower), "disconnected");
    const wrong = await pageFetch(
      h,
      jar,
      "/api/auth/login",
      post({
        url: before.allknower.url,
        email: DEFAULT_OWNER.email,
        password: "not-the-password",
      }),
    );
    assert.equal(wrong.status, 401);
    assertRouteError(wrong.body);
    assert.equal(wrong.body.error, "UNAUTHORIZED");
    const ok = await pageFetch(
      h,
      jar,
      "/api/auth/login",
      post({
        url: before.allknower.url,
        email: DEFAULT_OWNER.email,
        password: DEFAULT_OWNER.password,
      }),
    );
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(jar.names(), ["parser_token", "parser_url"]);
    const after = await status(h, jar);
    assert.deepEqual([cardState(after.allknower), cardState(after.allcodex)], [
      "connected",
      "connected",
    ]);
  }, LOGIN_FIRST));

Deno.test("AllKnower card: register with the status url creates the account and signs in", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx AllKnowerCard.handleRegister: POST /api/auth/register
    // { url, email, name, password }; reads `res.ok`, else `error`
    const jar = cookieJar();
    const { allknower } = await status(h, jar);
    const r = await pageFetch(
      h,
      jar,
      "/api/auth/register",
      post({
        url: allknower.url,
        email: "scribe@example.org",
        name: "Scribe",
        password: "quill-and-ink-42",
      }),
    );
    assert.ok(r.status >= 200 && r.status < 300, JSON.stringify(r.body));
    assert.equal(cardState((await status(h, jar)).allknower), "connected");
    const again = await pageFetch(
      h,
      jar,
      "/api/auth/register",
      post({
        url: allknower.url,
        email: "scribe@example.org",
        name: "Scribe",
        password: "quill-and-ink-42",
      }),
    );
    assertRouteError(again.body);
    assert.equal(again.body.error, "CONFLICT");
  }, LOGIN_FIRST));

Deno.test("AllKnower card: disconnect with service=allknower signs this browser out", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx AllKnowerCard.handleDisconnect:
    // DELETE /api/config/disconnect?service=allknower (answer not read)
    const jar = cookieJar();
    const { allknower } = await status(h, jar);
    await pageFetch(
      h,
      jar,
      "/api/auth/login",
      post({
        url: allknower.url,
        email: DEFAULT_OWNER.email,
        password: DEFAULT_OWNER.password,
      }),
    );
    const r = await pageFetch(h, jar, "/api/config/disconnect?service=allknower", {
      method: "DELETE",
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(jar.names(), []);
    assert.equal(cardState((await status(h, jar)).allknower), "disconnected");
  }, LOGIN_FIRST));

Deno.test("AllCodex card: disconnect, then connect a token with the status url as baseUrl", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx AllCodexCard.handleDisconnect: DELETE
    // /api/integrations/allcodex (answer not read); handleConnectToken: POST
    // /api/integrations/allcodex/connect { baseUrl, token } (reads `error` on failure), then
    // GET /api/config/status for `allcodex.ok` and `version`
    const jar = cookieJar();
    const first = await status(h, jar);
    assert.equal(cardState(first.allcodex), "connected");
    const off = await pageFetch(h, jar, "/api/integrations/allcodex", { method: "DELETE" });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.equal((await status(h, jar)).allcodex.ok, false);
    const bad = await pageFetch(
      h,
      jar,
      "/api/integrations/allcodex/connect",
      post({
        baseUrl: "http://elsewhere.example:8080",
        token: h.core.token,
      }),
    );
    assert.equal(bad.status, 400);
    assertRouteError(bad.body);
    const r = await pageFetch(
      h,
      jar,
      "/api/integrations/allcodex/connect",
      post({
        baseUrl: first.allcodex.url,
        token: h.core.token,
      }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const after = await status(h, jar);
    assert.equal(cardState(after.allcodex), "connected");
    assert.equal(typeof after.allcodex.version, "string");
  }, DEV_LIKE));

Deno.test("AllCodex card, password tab: POST /api/config/allknower-login without email is a 400 naming email", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx AllCodexCard.handleLoginPassword posts { url, password }
    // to /api/config/allknower-login, the Parser login, which needs an email: the UI's own
    // original route answered 400 too. The answer is an error the form shows (`error`).
    const jar = cookieJar();
    const { allcodex } = await status(h, jar);
    const r = await pageFetch<RouteErrorPayload & { details: { fields: { path: string }[] } }>(
      h,
      jar,
      "/api/config/allknower-login",
      post({ url: allcodex.url, password: DEFAULT_CORE_PASSWORD }),
    );
    assert.equal(r.status, 400);
    assertRouteError(r.body);
    assert.equal(r.body.error, "INVALID_REQUEST");
    assert.deepEqual(r.body.details.fields.map((f) => f.path), ["body.email"]);
  }, DEV_LIKE));

Deno.test("older UI (main): connect, allcodex-login, allknower-login/-register and disconnect=allcodex", () =>
  withHarness(async (h) => {
    // branch main, app/(portal)/settings/page.tsx AllKnowerCard.handleLogin: POST
    // /api/config/allknower-login { url, email, password }
    const jar = cookieJar();
    const first = await status(h, jar);
    const login = await pageFetch(
      h,
      jar,
      "/api/config/allknower-login",
      post({
        url: first.allknower.url,
        email: DEFAULT_OWNER.email,
        password: DEFAULT_OWNER.password,
      }),
    );
    assert.equal(login.status, 200, JSON.stringify(login.body));
    // AllCodexCard.handleDisconnect: DELETE /api/config/disconnect?service=allcodex
    const off = await pageFetch(h, jar, "/api/config/disconnect?service=allcodex", {
      method: "DELETE",
    });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.equal(cardState((await status(h, jar)).allcodex), "disconnected");
    // AllCodexCard.handleConnectToken: POST /api/config/connect { allcodex: { url, token } }
    const connect = await pageFetch(
      h,
      jar,
      "/api/config/connect",
      post({
        allcodex: { url: first.allcodex.url, token: h.core.token },
      }),
    );
    assert.equal(connect.status, 200, JSON.stringify(connect.body));
    assert.equal(cardState((await status(h, jar)).allcodex), "connected");
    // AllCodexCard.handleLoginPassword: POST /api/config/allcodex-login { url, password }
    const password = await pageFetch(
      h,
      jar,
      "/api/config/allcodex-login",
      post({
        url: first.allcodex.url,
        password: DEFAULT_CORE_PASSWORD,
      }),
    );
    assert.equal(password.status, 200, JSON.stringify(password.body));
    assert.equal(cardState((await status(h, jar)).allcodex), "connected");
    // AllKnowerCard.handleRegister: POST /api/config/allknower-register
    const register = await pageFetch(
      h,
      cookieJar(),
      "/api/config/allknower-register",
      post({
        url: first.allknower.url,
        email: "second@example.org",
        name: "Second",
        password: "a-long-enough-password",
      }),
    );
    assert.ok(register.status >= 200 && register.status < 300, JSON.stringify(register.body));
  }, DEV_LIKE));

Deno.test("integration status under the front end's name: GET /api/integrations/allcodex/status", () =>
  withHarness(async (h) => {
    // the UI's original routes include it (no page of branch dev calls it): same as codex/status
    const r = await pageFetch<{ connected: boolean }>(
      h,
      cookieJar(),
      "/api/integrations/allcodex/status",
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.connected, true);
  }, DEV_LIKE));

Deno.test("portal card and new-note page: GET/PUT /api/config/portal { loreRootNoteId }", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx PortalConfigCard (GET on mount, PUT on save; reads `error`
    // on failure) and app/(portal)/lore/new/page.tsx (GET: the default parent)
    const jar = cookieJar();
    const get = await pageFetch<{ loreRootNoteId: string }>(h, jar, "/api/config/portal");
    assert.equal(get.body.loreRootNoteId, "root");
    // the field is sent as typed
    const put = await pageFetch(h, jar, "/api/config/portal", {
      method: "PUT",
      headers: JSON_HEADERS,
      body: JSON.stringify({ loreRootNoteId: ` ${W.loreRoot} ` }),
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const after = await pageFetch<{ loreRootNoteId: string }>(h, jar, "/api/config/portal");
    assert.equal(after.body.loreRootNoteId, W.loreRoot);
    const missing = await pageFetch(h, jar, "/api/config/portal", {
      method: "PUT",
      headers: JSON_HEADERS,
      body: JSON.stringify({ loreRootNoteId: "noSuchNote12" }),
    });
    assert.equal(missing.status, 404);
    assertRouteError(missing.body);
  }, DEV_LIKE));

Deno.test("brain dump page: GET /api/config/models gives each task's models and autoMode", () =>
  withHarness(async (h) => {
    // app/(portal)/brain-dump/page.tsx modelChains: `r.ok ? r.json() : {}`, then
    // `["brain-dump"].models` and `.autoMode`
    const r = await pageFetch<Record<string, { models: string[]; autoMode: boolean }>>(
      h,
      cookieJar(),
      "/api/config/models",
    );
    assert.equal(r.status, 200);
    assert.ok(Array.isArray(r.body["brain-dump"].models));
    assert.equal(typeof r.body["brain-dump"].autoMode, "boolean");
  }, DEV_LIKE));

Deno.test("dev card: the wipe button's bare POST is refused with an error the card shows; nothing is wiped", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx DevDebugCard.handleWipeDB: POST /api/config/wipe with no
    // body (after a browser confirm()); reads `data.error` and shows "Error: <error>". A wipe
    // needs ENABLE_WIPE and the typed confirmation body, which this button does not send.
    const loreBefore = h.core.store.noteIds().filter((id) => h.core.store.hasLabel(id, "lore"));
    const r = await pageFetch(h, cookieJar(), "/api/config/wipe", { method: "POST" });
    assert.ok(r.status >= 400, JSON.stringify(r.body));
    assertRouteError(r.body);
    const loreAfter = h.core.store.noteIds().filter((id) => h.core.store.hasLabel(id, "lore"));
    assert.deepEqual(loreAfter, loreBefore);
  }, DEV_LIKE));

// ---- the error banner -------------------------------------------------------------------------

/** What ServiceBanner shows for a code: the label, and whether it links to Settings. */
function banner(code: string): { label: string; settingsLink: boolean } {
  // components/portal/ServiceBanner.tsx
  if (code === "NOT_CONFIGURED") return { label: "not connected", settingsLink: true };
  if (code === "UNAUTHORIZED") return { label: "credentials expired", settingsLink: true };
  return { label: "unavailable", settingsLink: false };
}

/** The lore browser's fetch (fetchJsonOrThrow) of a failing service: the payload it throws. */
async function loreError(h: Harness, jar = cookieJar()): Promise<RouteErrorPayload> {
  // app/(portal)/lore/page.tsx LorePageContent: fetchJsonOrThrow(`/api/lore?q=...`), and on
  // failure <ServiceBanner service="AllCodex" error={payload} />
  const r = await pageFetch(h, jar, `/api/lore?q=${encodeURIComponent("#lore")}`);
  assert.ok(r.status >= 400, `expected a failure, got ${r.status}`);
  assertRouteError(r.body);
  return r.body;
}

Deno.test("banner: no login yet → UNAUTHORIZED, shown with a link to Settings", () =>
  withHarness(async (h) => {
    const e = await loreError(h);
    assert.equal(e.error, "UNAUTHORIZED");
    assert.deepEqual(banner(e.error), { label: "credentials expired", settingsLink: true });
  }, LOGIN_FIRST));

Deno.test("banner: no backend credentials at all → NOT_CONFIGURED, shown with a link to Settings", () =>
  withHarness(async (h) => {
    const e = await loreError(h);
    assert.equal(e.error, "NOT_CONFIGURED");
    assert.deepEqual(banner(e.error), { label: "not connected", settingsLink: true });
  }, { noCoreCredentials: true }));

Deno.test("banner: Core refuses the stored token → UNAUTHORIZED (credentials expired)", () =>
  withHarness(async (h) => {
    h.core.fault({ path: "/etapi/notes", status: 401 });
    const e = await loreError(h);
    assert.equal(e.error, "UNAUTHORIZED");
    assert.equal(banner(e.error).settingsLink, true);
  }));

Deno.test("banner: Core unreachable → UNREACHABLE", () =>
  withHarness(async (h) => {
    const e = await loreError(h);
    assert.equal(e.error, "UNREACHABLE");
  }, { coreUrlOverride: REFUSED_URL }));

Deno.test("banner: brain dump history without a Parser login → UNAUTHORIZED", () =>
  withHarness(async (h) => {
    // app/(portal)/brain-dump/page.tsx history: `if (!r.ok) throw await r.json()`, then
    // <ServiceBanner service="AllKnower" error={historyError} />
    const r = await pageFetch(h, cookieJar(), "/api/brain-dump/history");
    assert.equal(r.status, 401);
    assertRouteError(r.body);
    assert.equal(r.body.error, "UNAUTHORIZED");
  }, LOGIN_FIRST));
