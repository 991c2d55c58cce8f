/**
 * Web-push notifications (Parser): the VAPID public key browsers subscribe with, and
 * registering or removing a browser's push subscription. The Parser later POSTs to the
 * subscription's endpoint, so only endpoints that can be a public push service are accepted:
 * nothing a client sends can make the Parser call into its own network.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { z } from "zod";
import { type Route } from "../api/router.ts";
import { parserRoute } from "./parser_proxy.ts";
import { parserOk } from "./schemas.ts";

/** Host names that never belong to a public push service. */
const LOCAL_SUFFIXES = [".localhost", ".local", ".internal", ".lan", ".home.arpa", ".intranet"];

/**
 * Whether `value` can be a public push-service endpoint: https on the default port, no
 * credentials, a dotted DNS name (no IP literal, no local names).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isPushEndpoint("https://fcm.googleapis.com/fcm/send/abc"), true);
 * assert.equal(isPushEndpoint("https://127.0.0.1/push"), false);
 * assert.equal(isPushEndpoint("http://push.example.com/x"), false);
 * ```
 */
export function isPushEndpoint(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const host = url.hostname.toLowerCase();
  return url.protocol === "https:" && url.port === "" && !url.username && !url.password &&
    host.includes(".") && !host.startsWith("[") && !/^[\d.]+$/.test(host) &&
    !host.endsWith(".") && !LOCAL_SUFFIXES.some((s) => host === s.slice(1) || host.endsWith(s));
}

const endpointSchema = z.string().max(2048).refine(
  isPushEndpoint,
  "must be the https URL of a public push service (default port, no credentials, no IP address)",
);

/** Standard or URL-safe base64, padding optional (what `PushSubscription.toJSON()` gives). */
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** A base64 key that decodes to `bytes` bytes (and passes `check` on them). */
function keySchema(bytes: number, what: string, check: (b: Uint8Array) => boolean = () => true) {
  return z.string().max(256).refine((s) => {
    if (!BASE64.test(s)) return false;
    const decoded = Buffer.from(s, "base64");
    return decoded.length === bytes && check(decoded);
  }, `must be base64 of ${what}`);
}

const subscribeBody = z.strictObject({
  endpoint: endpointSchema,
  // browsers include it in PushSubscription.toJSON(); the Parser does not store it
  expirationTime: z.number().nullable().optional(),
  keys: z.strictObject({
    p256dh: keySchema(65, "an uncompressed P-256 public key (65 bytes)", (b) => b[0] === 4),
    auth: keySchema(16, "a 16-byte authentication secret"),
  }),
});

/** The VAPID key answer, as the Parser sends it and we pass it on. */
const vapidAnswer = z.object({ publicKey: z.string().min(1).max(512).nullable() });

/** What the subscription routes decide where the API is silent. */
const ENDPOINT_RULE = "`endpoint` must be an https URL on the default port of a public DNS name " +
  "(no IP address, no local name, at most 2048 characters), so the Parser, which later posts to " +
  "it, cannot be made to call into a private network.";

/** `GET /api/notifications/vapid-public-key` — the key, or null when push is not set up. */
export const vapidPublicKey = parserRoute({
  method: "GET",
  path: "/api/notifications/vapid-public-key",
  summary: "VAPID public key for push subscription (`null` when the Parser has none)",
  tag: "notifications",
  responses: { 200: { description: "`{ publicKey: string | null }`", schema: vapidAnswer } },
  upstream: () => ({ path: "/notifications/vapid-public-key" }),
  answer: vapidAnswer,
});

/** `POST /api/notifications/subscribe` — store this browser's push subscription. */
export const subscribe = parserRoute({
  method: "POST",
  path: "/api/notifications/subscribe",
  summary:
    "Register a browser push subscription `{ endpoint, keys: { p256dh, auth } }` (a public https push service)",
  tag: "notifications",
  body: subscribeBody,
  description: `${ENDPOINT_RULE} \`p256dh\` must be a 65-byte uncompressed P-256 key, \`auth\` ` +
    "16 bytes (base64, standard or URL-safe); `expirationTime` is accepted and not stored.",
  responses: {
    200: {
      description: "`{ ok: true }`; subscribing an endpoint again updates its keys",
      schema: parserOk,
    },
    400: "Endpoint not a public https push-service URL, or keys of the wrong size",
    503: "`NOT_CONFIGURED` (`reason: push-not-configured`): the Parser has no VAPID key",
  },
  upstream: (ctx) => ({
    method: "POST",
    path: "/notifications/subscribe",
    body: { endpoint: ctx.body.endpoint, keys: ctx.body.keys },
  }),
  answer: parserOk,
});

/** `DELETE /api/notifications/unsubscribe` — remove a push subscription (JSON body). */
export const unsubscribe = parserRoute({
  method: "DELETE",
  path: "/api/notifications/unsubscribe",
  summary: "Remove a push subscription: JSON body `{ endpoint }`; idempotent",
  tag: "notifications",
  body: z.strictObject({ endpoint: endpointSchema }),
  description: ENDPOINT_RULE,
  responses: {
    200: {
      description: "`{ ok: true }`, also when there was no such subscription",
      schema: parserOk,
    },
  },
  upstream: (ctx) => ({
    method: "DELETE",
    path: "/notifications/unsubscribe",
    body: { endpoint: ctx.body.endpoint },
  }),
  answer: parserOk,
});

/** The notification routes. */
export const notificationRoutes: Route[] = [vapidPublicKey, subscribe, unsubscribe];
