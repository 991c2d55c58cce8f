/**
 * The public site's password form (`POST /public/unlock`) and "Lock again" (`POST /public/lock`)
 * over HTTP against the Core double: a protected page is the site's own themed form (never the
 * browser's Basic dialog) while `/api/public/*` keeps its HTTP Basic challenge, the right
 * password opens the branch through a sealed cookie, and the cookie is no way around the share's
 * rules (wrong or changed passwords, tampering, other sites, other pages, other visitors).
 */
import assert from "node:assert/strict";
import { deriveSealKey, seal } from "../../src/session/seal.ts";
import { unlockDigest } from "../../src/share/unlock_cookie.ts";
import { type Harness, TEST_SESSION_SECRET, withHarness } from "../helpers/harness.ts";
import { SHARE_CREDENTIALS, SIGIL_PNG, W } from "../../sims/world.ts";

const VAULT = `/public/lore/${W.guideVault}`;
const LEDGER = `/public/lore/${W.guideVaultLedger}`;
const LEDGER_TEXT = "Entries for oil, rope and silence";
const RIGHT = { user: SHARE_CREDENTIALS.user, password: SHARE_CREDENTIALS.password };
const WRONG = { user: SHARE_CREDENTIALS.user, password: "candle" };

interface Got {
  status: number;
  headers: Headers;
  body: string;
}

async function get(h: Harness, path: string, headers: HeadersInit = {}): Promise<Got> {
  const res = await h.request(path, { headers });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/**
 * Posts the password form as a browser on one of our pages does: same origin, and under the
 * site's `Referrer-Policy: no-referrer` an opaque `Origin`.
 */
async function post(
  h: Harness,
  path: string,
  fields: Record<string, string>,
  headers: HeadersInit = {},
): Promise<Got> {
  const res = await h.request(path, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: "null",
      "sec-fetch-site": "same-origin",
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** The `Cookie` header a browser sends back after `got`'s `Set-Cookie`. */
function cookieOf(got: Got): string {
  const set = got.headers.get("set-cookie");
  assert.ok(set, "a cookie is set");
  return set.split(";")[0];
}

/** Unlocks the vault branch; the cookie that remembers it. */
async function unlock(h: Harness, returnTo = LEDGER): Promise<string> {
  const res = await post(h, "/public/unlock", { ...RIGHT, return: returnTo });
  assert.equal(res.status, 303, res.body);
  assert.equal(res.headers.get("location"), returnTo);
  return cookieOf(res);
}

/** The password page as it reads whatever page it returns to. */
function withoutReturn(body: string): string {
  return body.replace(/name="return" value="[^"]*"/, "");
}

Deno.test("unlock: a protected page is the themed password form; the API keeps HTTP Basic", () =>
  withHarness(async (h) => {
    for (const path of [VAULT, LEDGER]) {
      const page = await get(h, path);
      assert.equal(page.status, 401, path);
      assert.equal(page.headers.get("www-authenticate"), null, path);
      assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
      assert.equal(page.headers.get("cache-control"), "no-store");
      assert.match(page.body, /<link rel="stylesheet" href="\/public\/site\.css/, "the layout");
      assert.match(page.body, /<form class="unlock" method="post" action="\/public\/unlock">/);
      assert.match(page.body, new RegExp(`name="return" value="${path}"`));
      assert.match(page.body, /<label for="unlock-user">Name<\/label>/);
      assert.match(page.body, /<label for="unlock-password">Password<\/label>/);
      assert.match(page.body, /id="unlock-password" name="password" type="password"/);
      assert.ok(!page.body.includes(LEDGER_TEXT));
      const main = page.body.slice(page.body.indexOf("<main"), page.body.indexOf("</main>"));
      assert.ok(!/<script|\sstyle=/i.test(main), "no script, no inline style");
    }
    const api = await get(h, `/api/public/lore/${W.guideVault}`);
    assert.equal(api.status, 401);
    assert.equal(api.headers.get("www-authenticate"), 'Basic realm="Shared lore", charset="UTF-8"');
    assert.equal(JSON.parse(api.body).error, "UNAUTHORIZED");
    // scripts and curl keep HTTP Basic on the site too
    const basic = `Basic ${btoa(`${RIGHT.user}:${RIGHT.password}`)}`;
    const withBasic = await get(h, LEDGER, { authorization: basic });
    assert.equal(withBasic.status, 200);
    assert.match(withBasic.body, new RegExp(LEDGER_TEXT));
  }));

Deno.test("unlock: the right password sets a sealed cookie that opens the branch's pages and images", () =>
  withHarness(async (h) => {
    h.core.store.createAttachment({
      attachmentId: "attVaultMap1",
      ownerId: W.guideVault,
      role: "image",
      mime: "image/png",
      title: "vault-map.png",
      content: SIGIL_PNG,
    });
    const res = await post(h, "/public/unlock", { ...RIGHT, return: LEDGER });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), LEDGER);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const set = res.headers.get("set-cookie") ?? "";
    assert.match(set, /^share_unlock=v1\.[\w-]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    assert.ok(!set.includes(RIGHT.password) && !set.includes(btoa(RIGHT.password)));
    const cookie = cookieOf(res);

    for (const path of [LEDGER, VAULT]) {
      const page = await get(h, path, { cookie });
      assert.equal(page.status, 200, path);
      assert.equal(page.headers.get("cache-control"), "private, no-cache", path);
      assert.match(page.body, /<form class="lock" method="post" action="\/public\/lock">/);
    }
    assert.match((await get(h, LEDGER, { cookie })).body, new RegExp(LEDGER_TEXT));
    const image = await h.request("/api/public/images/attVaultMap1/x.png", { headers: { cookie } });
    assert.equal(image.status, 200);
    assert.match(image.headers.get("cache-control") ?? "", /^private,/);
    await image.body?.cancel();
    const anonymousImage = await h.request("/api/public/images/attVaultMap1/x.png");
    assert.equal(anonymousImage.status, 401);
    assert.match(anonymousImage.headers.get("www-authenticate") ?? "", /^Basic /);
    await anonymousImage.body?.cancel();
    // the JSON API reads HTTP Basic only
    const api = await get(h, `/api/public/lore/${W.guideVault}`, { cookie });
    assert.equal(api.status, 401);
    assert.match(api.headers.get("www-authenticate") ?? "", /^Basic /);
  }));

Deno.test("unlock: the cookie is Secure over HTTPS", () =>
  withHarness(async (h) => {
    // behind a trusted TLS proxy (no Origin: a proxy's own request, like curl's)
    const res = await post(h, "/public/unlock", { ...RIGHT, return: LEDGER }, {
      origin: "",
      "sec-fetch-site": "",
      "x-forwarded-proto": "https",
    });
    assert.equal(res.status, 303);
    assert.match(res.headers.get("set-cookie") ?? "", /; HttpOnly; Secure; SameSite=Lax$/);
  }, { env: { TRUST_PROXY: "true" } }));

Deno.test("unlock: a wrong password is the form again (401, a message), the same for every page", () =>
  withHarness(async (h) => {
    const bodies = new Set<string>();
    const returns = [
      LEDGER,
      "/",
      `/public/lore/${W.guideDraft}`, // hidden
      `/public/lore/${W.guideProtected}`, // protected in Core
      "/public/lore/noSuchNote01", // missing
    ];
    for (const returnTo of returns) {
      const res = await post(h, "/public/unlock", { ...WRONG, return: returnTo });
      assert.equal(res.status, 401, returnTo);
      assert.equal(res.headers.get("www-authenticate"), null);
      assert.equal(res.headers.get("set-cookie"), null);
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.match(res.body, /role="alert">That name and password are not right\./);
      assert.match(res.body, /aria-invalid="true"/);
      assert.match(res.body, new RegExp(`name="return" value="${returnTo}"`));
      assert.match(res.body, new RegExp(`name="user" type="text" value="${WRONG.user}"`));
      assert.ok(!res.body.includes(WRONG.password), "the password is never shown again");
      assert.ok(!res.body.includes("Rumours on the Docks"), "nothing of the hidden note");
      bodies.add(withoutReturn(res.body));
    }
    assert.equal(bodies.size, 1, "no existence oracle");
  }));

Deno.test("unlock: attempts are rate-limited per client like logins", () =>
  withHarness(async (h) => {
    for (let i = 0; i < 2; i++) {
      assert.equal((await post(h, "/public/unlock", { ...WRONG, return: LEDGER })).status, 401);
    }
    for (const fields of [WRONG, RIGHT]) {
      const res = await post(h, "/public/unlock", { ...fields, return: LEDGER });
      assert.equal(res.status, 429);
      assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
      assert.match(res.headers.get("retry-after") ?? "", /^\d+$/);
      assert.equal(res.headers.get("set-cookie"), null, "not even the right password");
      assert.match(res.body, /role="alert">Too many attempts/);
      assert.match(res.body, /<form class="unlock"/);
    }
  }, { env: { AUTH_RATE_LIMIT: "2" } }));

Deno.test("unlock: a changed password locks the branch again", () =>
  withHarness(async (h) => {
    const cookie = await unlock(h);
    assert.equal((await get(h, LEDGER, { cookie })).status, 200);
    // the GM changes the password through the service
    const vault = await h.etapi<{ attributes: { attributeId: string; name: string }[] }>(
      `/notes/${W.guideVault}`,
    );
    const old = vault.attributes.find((a) => a.name === "shareCredentials")!;
    const del = await h.request(`/api/lore/${W.guideVault}/attributes?attrId=${old.attributeId}`, {
      method: "DELETE",
    });
    assert.equal(del.status, 204);
    const add = await h.request(`/api/lore/${W.guideVault}/attributes`, {
      method: "POST",
      json: {
        type: "label",
        name: "shareCredentials",
        value: "player:candle",
        isInheritable: true,
      },
    });
    assert.equal(add.status, 201);
    const locked = await get(h, LEDGER, { cookie });
    assert.equal(locked.status, 401);
    assert.match(locked.body, /<form class="unlock"/);
    assert.equal((await post(h, "/public/unlock", { ...RIGHT, return: LEDGER })).status, 401);
    const fresh = await post(h, "/public/unlock", { ...WRONG, return: LEDGER });
    assert.equal(fresh.status, 303);
    assert.equal((await get(h, LEDGER, { cookie: cookieOf(fresh) })).status, 200);
  }));

Deno.test("unlock: a tampered or foreign cookie is ignored", () =>
  withHarness(async (h) => {
    const cookie = await unlock(h);
    const [name, value] = cookie.split("=");
    const last = value.at(-1) === "A" ? "B" : "A";
    const key = await deriveSealKey(TEST_SESSION_SECRET);
    const opened = JSON.stringify([[W.guideVault, unlockDigest(W.guideVault, "player:lantern")]]);
    const forged = [
      `${name}=${value.slice(0, -1)}${last}`, // one character changed
      `${name}=${value.slice(0, 40)}`, // cut short
      `${name}=v1.${btoa(opened)}`, // not sealed
      `${name}=${await seal(key, "parser_token", opened)}`, // sealed for another cookie
      `${name}=${await seal(
        await deriveSealKey("another secret of at least 32 bytes"),
        name,
        opened,
      )}`,
    ];
    for (const bad of forged) {
      const page = await get(h, LEDGER, { cookie: bad });
      assert.equal(page.status, 401, bad);
      assert.match(page.body, /<form class="unlock"/);
      // treated as no cookie at all: an open page is the anonymous one
      const home = await get(h, "/", { cookie: bad });
      assert.equal(home.headers.get("cache-control"), "no-cache", bad);
    }
    // sealed by us, but its digest is of no password of the branch
    const noDigest = await seal(key, name, JSON.stringify([[W.guideVault, "x".repeat(43)]]));
    assert.equal((await get(h, LEDGER, { cookie: `${name}=${noDigest}` })).status, 401);
  }));

Deno.test("unlock: another site's POST is refused, to the form and to Lock again", () =>
  withHarness(async (h) => {
    const crossSite = [
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      { origin: "https://evil.example", "sec-fetch-site": "" },
      { origin: "", "sec-fetch-site": "same-site" },
      { origin: "null", "sec-fetch-site": "cross-site" }, // a sandboxed frame
    ];
    for (const headers of crossSite) {
      const res = await post(h, "/public/unlock", { ...RIGHT, return: LEDGER }, headers);
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(JSON.parse(res.body).error, "CSRF_REJECTED");
      assert.equal(res.headers.get("set-cookie"), null);
      const lock = await post(h, "/public/lock", {}, { ...headers, cookie: "share_unlock=x" });
      assert.equal(lock.status, 403);
      assert.equal(lock.headers.get("set-cookie"), null);
    }
  }));

Deno.test("unlock: the form returns to a page of this site only, never elsewhere", () =>
  withHarness(async (h) => {
    const away = [
      "https://evil.example/",
      "//evil.example/public",
      "/\\evil.example",
      "\\\\evil.example",
      "/public/..//evil.example",
      "/public/../api/lore",
      "/%2e%2e/api/lore",
      "javascript:alert(1)",
      "/public/lore/x#top",
      " /public",
      "/public\t",
      "/api/public/lore/x",
      "/public/unlock",
      "/publicity",
      "",
      "x".repeat(3000),
    ];
    for (const returnTo of away) {
      const res = await post(h, "/public/unlock", { ...RIGHT, return: returnTo });
      assert.equal(res.status, 400, JSON.stringify(returnTo));
      assert.equal(res.headers.get("location"), null);
      assert.equal(res.headers.get("set-cookie"), null);
    }
    for (const returnTo of ["/", "/?q=lantern", "/public", "/public/types/location"]) {
      assert.equal(await unlock(h, returnTo) !== "", true, returnTo);
    }
  }));

Deno.test("unlock: hidden and missing notes stay the same 404 with the cookie", () =>
  withHarness(async (h) => {
    const cookie = await unlock(h, `/public/lore/${W.guideDraft}`); // the answer says nothing
    const bodies = new Set<string>();
    for (const id of [W.guideDraft, W.guideGmOnly, W.guideProtected, "noSuchNote01"]) {
      const page = await get(h, `/public/lore/${id}`, { cookie });
      assert.equal(page.status, 404, id);
      bodies.add(page.body.replace(/<code>[^<]*<\/code>/, ""));
    }
    assert.equal(bodies.size, 1);
  }));

Deno.test("unlock: a page seen unlocked never reaches another visitor from a cache", () =>
  withHarness(async (h) => {
    // an open page kept for anonymous visitors first
    const before = await get(h, "/");
    assert.equal(before.headers.get("cache-control"), "no-cache");
    const cookie = await unlock(h);
    for (const path of ["/", LEDGER, VAULT]) {
      const unlocked = await get(h, path, { cookie });
      assert.equal(unlocked.status, 200, path);
      assert.equal(unlocked.headers.get("cache-control"), "private, no-cache", path);
    }
    assert.match((await get(h, "/", { cookie })).body, /The Lantern Vault/);
    for (const path of [LEDGER, VAULT]) assert.equal((await get(h, path)).status, 401, path);
    const after = await get(h, "/");
    assert.equal(after.headers.get("cache-control"), "no-cache");
    assert.equal(after.body, before.body);
    assert.ok(!after.body.includes("The Lantern Vault"));
    assert.ok(!after.body.includes("Lock again"));
  }));

Deno.test("unlock: Lock again forgets the passwords and goes home", () =>
  withHarness(async (h) => {
    const cookie = await unlock(h);
    const res = await post(h, "/public/lock", {}, { cookie });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/public");
    assert.match(res.headers.get("set-cookie") ?? "", /^share_unlock=; Path=\/; Max-Age=0;/);
    // the browser drops the cookie: the branch is locked again
    assert.equal((await get(h, LEDGER)).status, 401);
    // without a cookie there is nothing to forget, and no cookie is set
    const none = await post(h, "/public/lock", {});
    assert.equal(none.status, 303);
    assert.equal(none.headers.get("set-cookie"), null);
  }));
