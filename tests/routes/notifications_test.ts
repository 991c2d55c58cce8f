/**
 * Notification routes over HTTP: the VAPID key, subscribing and unsubscribing a browser, the
 * endpoint rules that keep the Parser from calling into private networks, and push not being
 * configured.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { extrasTables } from "../../sims/parser_extras.ts";

const VAPID =
  "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U";
const OPTS = { parser: { extras: { vapidPublicKey: VAPID } }, parserSession: true };

const ENDPOINT = "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bH";
/** What `PushSubscription.toJSON()` gives: base64url keys without padding. */
const KEYS = {
  p256dh: Buffer.from([4, ...new Array(64).fill(7)]).toString("base64url"),
  auth: Buffer.from(new Array(16).fill(9)).toString("base64url"),
};

function parserCalls(h: Harness) {
  return h.parser!.requests
    .filter((r) => r.path.startsWith("/notifications/"))
    .map((r) => ({ method: r.method, path: r.path, body: JSON.parse(r.bodyText || "null") }));
}

async function send(h: Harness, method: string, path: string, json?: unknown) {
  const res = await h.request(path, { method, json });
  const text = await res.text();
  assertNoSecrets(h, text);
  return { status: res.status, body: JSON.parse(text) };
}

Deno.test("vapid-public-key: the Parser's key, or null when push is not set up", async () => {
  await withHarness(async (h) => {
    assert.deepEqual(await send(h, "GET", "/api/notifications/vapid-public-key"), {
      status: 200,
      body: { publicKey: VAPID },
    });
  }, OPTS);
  await withHarness(async (h) => {
    const r = await send(h, "GET", "/api/notifications/vapid-public-key");
    assert.deepEqual(r.body, { publicKey: null });
  }, { parser: true, parserSession: true });
});

Deno.test("subscribe then unsubscribe: the Parser stores and removes the browser's subscription", () =>
  withHarness(async (h) => {
    const { subscriptions } = extrasTables(h.parser!.store);
    const sub = { endpoint: ENDPOINT, expirationTime: null, keys: KEYS };
    assert.deepEqual(await send(h, "POST", "/api/notifications/subscribe", sub), {
      status: 200,
      body: { ok: true },
    });
    assert.deepEqual(parserCalls(h), [{
      method: "POST",
      path: "/notifications/subscribe",
      body: { endpoint: ENDPOINT, keys: KEYS },
    }]);
    const row = subscriptions.get(ENDPOINT);
    assert.deepEqual([row?.p256dh, row?.auth], [KEYS.p256dh, KEYS.auth]);

    for (let i = 0; i < 2; i++) {
      const r = await send(h, "DELETE", "/api/notifications/unsubscribe", { endpoint: ENDPOINT });
      assert.deepEqual(r, { status: 200, body: { ok: true } }, "idempotent");
    }
    assert.equal(subscriptions.size, 0);
    assert.deepEqual(parserCalls(h).slice(1).map((c) => [c.method, c.path, c.body]), [
      ["DELETE", "/notifications/unsubscribe", { endpoint: ENDPOINT }],
      ["DELETE", "/notifications/unsubscribe", { endpoint: ENDPOINT }],
    ]);
  }, OPTS));

Deno.test("subscribe: endpoints a push service could not have, and malformed keys, are 400", () =>
  withHarness(async (h) => {
    const endpoints = [
      "http://fcm.googleapis.com/fcm/send/x",
      "https://127.0.0.1/push",
      "https://[::1]/push",
      "https://localhost/push",
      "https://push.internal/x",
      "https://printer.local/x",
      "https://intranet/x",
      "https://push.example.com:8443/x",
      "https://user:pw@push.example.com/x",
      "javascript:alert(1)",
      `https://push.example.com/${"x".repeat(2048)}`,
    ];
    for (const endpoint of endpoints) {
      const r = await send(h, "POST", "/api/notifications/subscribe", { endpoint, keys: KEYS });
      assert.equal(r.status, 400, endpoint.slice(0, 60));
      assert.equal(r.body.details.fields[0].path, "body.endpoint");
    }
    const keys: [unknown, string][] = [
      [{ ...KEYS, p256dh: KEYS.p256dh.slice(0, 40) }, "body.keys.p256dh"],
      [
        { ...KEYS, p256dh: Buffer.from(new Array(65).fill(5)).toString("base64url") },
        "body.keys.p256dh",
      ],
      [{ ...KEYS, auth: "not base64!" }, "body.keys.auth"],
      [{ ...KEYS, auth: Buffer.from(new Array(8).fill(1)).toString("base64") }, "body.keys.auth"],
      [{ p256dh: KEYS.p256dh }, "body.keys.auth"],
      [{ ...KEYS, extra: "x" }, "body.keys"],
    ];
    for (const [k, field] of keys) {
      const r = await send(h, "POST", "/api/notifications/subscribe", {
        endpoint: ENDPOINT,
        keys: k,
      });
      assert.equal(r.status, 400, field);
      assert.equal(r.body.details.fields[0].path, field);
    }
    const unsub = await send(h, "DELETE", "/api/notifications/unsubscribe", {
      endpoint: "http://10.0.0.5/x",
    });
    assert.equal(unsub.status, 400);
    const noType = await h.request("/api/notifications/unsubscribe", {
      method: "DELETE",
      body: JSON.stringify({ endpoint: ENDPOINT }),
    });
    assert.equal(noType.status, 415);
    await noType.body?.cancel();
    assert.deepEqual(parserCalls(h), []);
  }, OPTS));

Deno.test("subscribe without a VAPID key on the Parser: 503 NOT_CONFIGURED naming push", () =>
  withHarness(async (h) => {
    const r = await send(h, "POST", "/api/notifications/subscribe", {
      endpoint: ENDPOINT,
      keys: KEYS,
    });
    assert.equal(r.status, 503);
    assert.equal(r.body.error, "NOT_CONFIGURED");
    assert.deepEqual(r.body.details, {
      service: "parser",
      upstreamCode: "PUSH_NOT_CONFIGURED",
      reason: "push-not-configured",
    });
    assert.match(r.body.message, /Push notifications are not configured/);
  }, { parser: true, parserSession: true }));
