import assert from "node:assert/strict";
import { prng } from "../../tests/helpers/prng.ts";
import { bodyPace, type BodyPaceLimits } from "./body_pace.ts";

/** The defaults of `CLIENT_BODY_*`. */
const DEFAULTS: BodyPaceLimits = {
  idleMs: 10_000,
  minBytesPerSecond: 2048,
  windowMs: 30_000,
  totalMs: 3_600_000,
};
const MIB = 1024 * 1024;

/**
 * Feeds a body to a pace on a clock of its own: each step waits `gapMs` for `bytes` (the read
 * waits the whole gap). Returns the first breach seen, checked when each read starts, just before
 * each arrival and, since a read is checked when `untilBreach` says, at that moment too.
 */
function feed(
  limits: BodyPaceLimits,
  steps: Iterable<{ gapMs: number; bytes: number }>,
): { breach: string | null; at: number; bytes: number } {
  const pace = bodyPace(limits);
  let now = 0;
  let bytes = 0;
  for (const { gapMs, bytes: n } of steps) {
    pace.waiting(now);
    const first = pace.breach(now);
    if (first) return { breach: first, at: now, bytes };
    const due = pace.untilBreach(now);
    if (due <= gapMs) return { breach: pace.breach(now + due), at: now + due, bytes };
    assert.equal(pace.breach(now + gapMs - 0.001), null);
    now += gapMs;
    pace.received(now, n);
    bytes += n;
  }
  return { breach: null, at: now, bytes };
}

/** An uplink of `bitsPerSecond` sending `total` bytes in TCP-sized pieces. */
function* uplink(bitsPerSecond: number, total: number, piece = 16 * 1024) {
  const gapMs = piece / (bitsPerSecond / 8) * 1000;
  for (let sent = 0; sent < total; sent += piece) {
    yield { gapMs, bytes: Math.min(piece, total - sent) };
  }
}

Deno.test("body pace: 100 MiB through a 1 Mbit/s or a 512 kbit/s uplink passes the defaults", () => {
  for (const bps of [1_000_000, 512_000]) {
    const r = feed(DEFAULTS, uplink(bps, 100 * MIB));
    assert.equal(r.breach, null, `${bps} bit/s`);
    assert.equal(r.bytes, 100 * MIB);
    // 14 and 27 minutes
    assert.ok(r.at > 13 * 60_000 && r.at < DEFAULTS.totalMs, `${bps}: ${r.at} ms`);
  }
});

Deno.test("body pace: an uplink that stalls for seconds at a time still passes", () => {
  // 512 kbit/s on average: 8 s at twice that, then 8 s of nothing (just under the idle limit)
  function* bursty() {
    for (let sent = 0; sent < 20 * MIB;) {
      for (const step of uplink(1_024_000, 1 * MIB)) {
        sent += step.bytes;
        yield step;
      }
      yield { gapMs: 8_000, bytes: 1 };
    }
  }
  assert.equal(feed(DEFAULTS, bursty()).breach, null);
});

Deno.test("body pace: one byte every 5 s is cut off as slow once the first window has passed", () => {
  const r = feed(DEFAULTS, Array.from({ length: 1000 }, () => ({ gapMs: 5_000, bytes: 1 })));
  assert.equal(r.breach, "slow");
  assert.equal(r.at, DEFAULTS.windowMs); // the grace period, not a moment longer
  assert.equal(r.bytes, 5); // (the sixth was due that very moment)
});

Deno.test("body pace: a body a little below the minimum rate is slow; a little above it passes", () => {
  // (a window just before an arrival holds one arrival less than its length in gaps: hence 10%)
  const limits = { ...DEFAULTS, minBytesPerSecond: 1000 };
  const below = feed(limits, Array.from({ length: 600 }, () => ({ gapMs: 1_000, bytes: 950 })));
  assert.equal(below.breach, "slow");
  const above = feed(limits, Array.from({ length: 600 }, () => ({ gapMs: 1_000, bytes: 1100 })));
  assert.equal(above.breach, null);
  assert.equal(above.at, 600_000);
});

Deno.test("body pace: nothing for the idle limit is idle; the whole body has a total limit", () => {
  const silent = feed(DEFAULTS, [{ gapMs: 60_000, bytes: 1 }]);
  assert.deepEqual(silent, { breach: "idle", at: DEFAULTS.idleMs, bytes: 0 });
  const fast = feed(DEFAULTS, uplink(100_000_000, 1024 * MIB * 1024, MIB));
  assert.equal(fast.breach, "total");
  assert.equal(fast.at, DEFAULTS.totalMs);
});

Deno.test("body pace: bytes sent fast first do not pay for a trickle after them", () => {
  const steps = [
    { gapMs: 1_000, bytes: 10 * MIB },
    ...Array.from({ length: 100 }, () => ({
      gapMs: 5_000,
      bytes: 1,
    })),
  ];
  const r = feed(DEFAULTS, steps);
  assert.equal(r.breach, "slow");
  // the burst leaves the window 30 s after it came (the trickle alone was never enough)
  assert.equal(r.at, 31_000);
});

Deno.test("body pace: only time spent waiting for the client counts", () => {
  const pace = bodyPace(DEFAULTS);
  pace.waiting(0);
  pace.received(1_000, 100);
  // the service then spends an hour elsewhere (a backend slow to take the bytes): no read waits
  pace.waiting(3_601_000);
  assert.equal(pace.breach(3_601_000), null);
  assert.equal(pace.untilBreach(3_601_000), DEFAULTS.idleMs);
  assert.deepEqual(pace.state(3_602_000), { bytes: 100, waitedMs: 2_000, windowBytes: 100 });
  pace.received(3_602_000, 100);
  assert.equal(pace.breach(3_700_000), null, "not waiting: nothing can break");
});

Deno.test("body pace: untilBreach is exact: no breach before it, a breach at it", () => {
  const rng = prng(20260522);
  for (let run = 0; run < 300; run++) {
    const limits = {
      idleMs: 1_000 + Math.floor(rng() * 20_000),
      minBytesPerSecond: Math.floor(rng() * 4096),
      windowMs: 1_000 + Math.floor(rng() * 60_000),
      totalMs: 10_000 + Math.floor(rng() * 600_000),
    };
    const pace = bodyPace(limits);
    let now = 0;
    for (let step = 0;; step++) {
      assert.ok(step < 100_000, "a body that never breaks its limits");
      pace.waiting(now);
      const due = pace.untilBreach(now);
      const gap = Math.floor(rng() * limits.idleMs * 1.05);
      if (gap < due) {
        assert.equal(pace.breach(now + gap), null);
        now += gap;
        pace.received(now, Math.floor(rng() ** 2 * limits.minBytesPerSecond * limits.idleMs / 300));
        // and some time elsewhere, which counts for nothing
        now += Math.floor(rng() * 5_000);
        continue;
      }
      if (due >= 1) assert.equal(pace.breach(now + due - 1), null, `run ${run} step ${step}`);
      assert.notEqual(pace.breach(now + due), null, `run ${run} step ${step}`);
      break;
    }
  }
});

Deno.test("body pace: a minimum rate of 0 only leaves the idle and total limits", () => {
  const limits = { ...DEFAULTS, minBytesPerSecond: 0 };
  const r = feed(limits, Array.from({ length: 10_000 }, () => ({ gapMs: 5_000, bytes: 1 })));
  assert.equal(r.breach, "total");
});
