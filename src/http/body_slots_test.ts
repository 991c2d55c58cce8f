import assert from "node:assert/strict";
import { BODY_RETRY_AFTER_SECONDS, bodySlots } from "./body_slots.ts";
import { ApiError, errorResponse } from "./errors.ts";

Deno.test("body slots: each client has its own bound, all together the total", () => {
  const slots = bodySlots({ total: 4, perClient: 2 });
  const a1 = slots.enter("a");
  slots.enter("a");
  assert.throws(() => slots.enter("a"), { status: 429, code: "RATE_LIMITED" });
  slots.enter("b");
  slots.enter("c");
  assert.throws(() => slots.enter("d"), { status: 503, code: "SERVICE_BUSY" });
  // a client at its own bound is told so even when the total is reached too
  assert.throws(() => slots.enter("a"), { status: 429 });
  a1();
  assert.equal(slots.inProgress(), 3);
  const a3 = slots.enter("a");
  assert.throws(() => slots.enter("a"), { status: 429 });
  a3();
  a3(); // giving back twice frees one slot only
  assert.equal(slots.inProgress(), 3);
});

Deno.test("body slots: a refusal is the error shape with Retry-After, ending the connection", async () => {
  const slots = bodySlots({ total: 1, perClient: 1 });
  slots.enter("a");
  let refusal: unknown;
  try {
    slots.enter("a");
  } catch (e) {
    refusal = e;
  }
  assert.ok(refusal instanceof ApiError);
  const res = errorResponse(refusal, "req-1");
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), String(BODY_RETRY_AFTER_SECONDS));
  assert.equal(res.headers.get("connection"), "close");
  assert.deepEqual(await res.json(), {
    error: "RATE_LIMITED",
    message: "Too many request bodies from this client at once (at most 1)",
    requestId: "req-1",
    details: { limit: 1, retryAfterSeconds: BODY_RETRY_AFTER_SECONDS },
  });
});
