import assert from "node:assert/strict";
import { createRateLimiter } from "./rate_limit.ts";

function clock(start = 1_000_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
    set: (ms: number) => {
      t = ms;
    },
  };
}

Deno.test("limiter: allows `limit` requests per window, then refuses with Retry-After", () => {
  const c = clock();
  const rl = createRateLimiter({ limit: 3, windowMs: 60_000, maxKeys: 100, now: c.now });
  assert.deepEqual(rl.check("a"), { allowed: true, retryAfterSeconds: 0, remaining: 2 });
  c.advance(1_000);
  assert.deepEqual(rl.check("a"), { allowed: true, retryAfterSeconds: 0, remaining: 1 });
  assert.deepEqual(rl.check("a"), { allowed: true, retryAfterSeconds: 0, remaining: 0 });
  assert.deepEqual(rl.check("a"), { allowed: false, retryAfterSeconds: 59, remaining: 0 });
  c.advance(58_500); // 500 ms left: rounds up, never 0
  assert.deepEqual(rl.check("a"), { allowed: false, retryAfterSeconds: 1, remaining: 0 });
  c.advance(500); // exactly when the window closes
  assert.deepEqual(rl.check("a"), { allowed: true, retryAfterSeconds: 0, remaining: 2 });
});

Deno.test("limiter: the window opens at the key's first request", () => {
  const c = clock(10_000_123);
  const rl = createRateLimiter({ limit: 1, windowMs: 10_000, maxKeys: 10, now: c.now });
  assert.equal(rl.check("a").allowed, true);
  c.advance(9_999);
  assert.equal(rl.check("a").allowed, false);
  c.advance(1);
  assert.equal(rl.check("a").allowed, true);
});

Deno.test("limiter: refused requests neither count nor extend the window", () => {
  const c = clock();
  const rl = createRateLimiter({ limit: 2, windowMs: 10_000, maxKeys: 10, now: c.now });
  rl.check("a");
  rl.check("a");
  for (let i = 0; i < 50; i++) {
    c.advance(100);
    const r = rl.check("a");
    assert.equal(r.allowed, false);
    assert.equal(r.retryAfterSeconds, Math.ceil((10_000 - 100 * (i + 1)) / 1000));
  }
  c.set(1_000_000 + 10_000);
  assert.deepEqual(rl.check("a"), { allowed: true, retryAfterSeconds: 0, remaining: 1 });
});

Deno.test("limiter: keys are independent", () => {
  const c = clock();
  const rl = createRateLimiter({ limit: 1, windowMs: 1_000, maxKeys: 10, now: c.now });
  assert.equal(rl.check("a").allowed, true);
  assert.equal(rl.check("a").allowed, false);
  assert.equal(rl.check("b").allowed, true);
  assert.equal(rl.check("__proto__").allowed, true);
  assert.equal(rl.check("__proto__").allowed, false);
});

Deno.test("limiter: a clock stepping back never promises more than one window", () => {
  const c = clock();
  const rl = createRateLimiter({ limit: 1, windowMs: 5_000, maxKeys: 10, now: c.now });
  rl.check("a");
  c.advance(-60_000);
  assert.deepEqual(rl.check("a"), { allowed: false, retryAfterSeconds: 5, remaining: 0 });
});

Deno.test("limiter: tracks at most maxKeys, evicting the least recently used", () => {
  const c = clock();
  const rl = createRateLimiter({ limit: 3, windowMs: 60_000, maxKeys: 3, now: c.now });
  rl.check("a");
  rl.check("b");
  rl.check("c");
  rl.check("a"); // a is now the most recent; b is the least
  rl.check("d"); // evicts b
  assert.equal(rl.size, 3);
  assert.equal(rl.check("a").remaining, 0); // a kept its count (3rd request)
  assert.equal(rl.check("b").remaining, 2); // b starts over: it was forgotten
  for (let i = 0; i < 1000; i++) rl.check(`k${i}`);
  assert.equal(rl.size, 3);
});

Deno.test("limiter: a flood of other keys does not lift a lockout", () => {
  const c = clock();
  const rl = createRateLimiter({ limit: 2, windowMs: 60_000, maxKeys: 50, now: c.now });
  rl.check("attacker");
  rl.check("attacker");
  assert.equal(rl.check("attacker").allowed, false);
  // The attacker goes quiet (becoming least recently used) while 10× maxKeys other clients
  // arrive, e.g. spoofed addresses or ordinary traffic.
  for (let i = 0; i < 500; i++) {
    c.advance(10);
    assert.equal(rl.check(`other-${i}`).allowed, true);
  }
  assert.ok(rl.size <= 50);
  const r = rl.check("attacker");
  assert.equal(r.allowed, false);
  assert.equal(r.retryAfterSeconds, 55);
  // ... and the lockout still ends on time
  c.advance(55_000);
  assert.equal(rl.check("attacker").allowed, true);
});

Deno.test("limiter: a hammering key stays tracked while others churn", () => {
  const c = clock();
  const rl = createRateLimiter({ limit: 5, windowMs: 60_000, maxKeys: 4, now: c.now });
  let allowed = 0;
  for (let i = 0; i < 200; i++) {
    if (rl.check("attacker").allowed) allowed++;
    rl.check(`rotating-${i}`);
  }
  assert.equal(allowed, 5);
});

Deno.test("limiter: a table full of blocked keys still admits and bounds new keys", () => {
  const c = clock();
  const rl = createRateLimiter({ limit: 1, windowMs: 60_000, maxKeys: 20, now: c.now });
  for (let i = 0; i < 20; i++) {
    rl.check(`blocked-${i}`);
    rl.check(`blocked-${i}`);
  }
  assert.equal(rl.size, 20);
  for (let i = 0; i < 100; i++) assert.equal(rl.check(`new-${i}`).allowed, true);
  assert.equal(rl.size, 20);
});

Deno.test("limiter: blocked keys whose window has closed are evicted normally", () => {
  const c = clock();
  const rl = createRateLimiter({ limit: 1, windowMs: 1_000, maxKeys: 2, now: c.now });
  rl.check("a");
  rl.check("a");
  c.advance(1_000);
  rl.check("b");
  rl.check("c"); // a's window closed: it is plain LRU now and goes
  assert.equal(rl.size, 2);
  assert.equal(rl.check("a").remaining, 0); // fresh window (limit 1)
});

Deno.test("limiter: invalid options are refused", () => {
  for (
    const bad of [
      { limit: 0, windowMs: 1, maxKeys: 1 },
      { limit: 1.5, windowMs: 1, maxKeys: 1 },
      { limit: 1, windowMs: 0, maxKeys: 1 },
      { limit: 1, windowMs: NaN, maxKeys: 1 },
      { limit: 1, windowMs: 1, maxKeys: 0 },
      { limit: 1, windowMs: 1, maxKeys: Infinity },
    ]
  ) {
    assert.throws(() => createRateLimiter(bad), RangeError, JSON.stringify(bad));
  }
});
