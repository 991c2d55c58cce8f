/**
 * Slow clients over raw TCP: a request head that never completes, a body shorter than its
 * `Content-Length`, a body trickling below the minimum rate and an idle kept-alive connection
 * all end — the server closes the connection (the client reads EOF). Nothing here measures
 * speed: the service's deadlines (the relay's, the bodies', the backend calls') and the doubles'
 * delays run on a clock each test moves itself, once it has seen the state it is about (a head
 * incomplete, a body read waiting); every wait for real work is bounded only by a hang guard.
 */
import assert from "node:assert/strict";
import { type Harness, type HarnessOptions, withHarness } from "../helpers/harness.ts";
import { eventually, type ManualDeadlines, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { rawConnection } from "../helpers/raw_http.ts";
import { LINGER_MS } from "../../src/http/connection_deadlines.ts";
import { makePng, W } from "../../sims/world.ts";

/**
 * The client deadlines on the test's clock. Each has its own duration, so `pendingOf` tells which
 * is armed; all are below the body rate's first window (30 s by default: a stalled body ends
 * for its silence) and far below the backend calls' deadline.
 */
const HEAD_MS = 4_000;
const BODY_IDLE_MS = 3_000;
const IDLE_MS = 6_000;
const BACKEND_MS = 600_000;
const short = (time: ManualDeadlines): HarnessOptions => ({
  deadlines: time,
  env: {
    CLIENT_DEADLINES: "on", // on loopback they would be off (a local proxy's job)
    CLIENT_HEADER_TIMEOUT_MS: String(HEAD_MS),
    CLIENT_BODY_TIMEOUT_MS: String(BODY_IDLE_MS),
    CLIENT_IDLE_TIMEOUT_MS: String(IDLE_MS),
    UPSTREAM_TIMEOUT_MS: String(BACKEND_MS),
    ALLOWED_HOSTS: "lore.example", // the Host the raw requests below name
  },
});
const HANG_GUARD_MS = 30_000;

/** A raw connection that stays open for what the test sends next. */
const open = (h: Harness, request: string | Uint8Array) =>
  rawConnection(h.url, request, { hangGuardMs: HANG_GUARD_MS });

const logs = (h: Harness) => h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
/** The relay's `connection closed` lines: why each connection was closed. */
const closes = (h: Harness) =>
  logs(h).filter((l) => l.msg === "connection closed").map((l) => l.reason);
const HEAD_LATE = "request head not complete in time";
const latin1 = (bytes: Uint8Array) => String.fromCharCode(...bytes);
const notesTitled = (h: Harness, title: string) =>
  h.core.store.noteIds().filter((id) => h.core.store.getNote(id)?.title === title);

Deno.test("slow client: a request head that never completes is closed", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    const conn = await open(
      h,
      "GET /healthz HTTP/1.1\r\nHost: lore.example\r\nX-A: b",
    );
    await eventually("the head's deadline is armed", () => time.pendingOf(HEAD_MS) === 1);
    time.advance(HEAD_MS);
    const r = await conn.done();
    assert.ok(r.closedByServer, "the server closed the connection");
    assert.equal(r.status, null);
    assert.deepEqual(closes(h), [HEAD_LATE], "the close is logged");
  }, short(time));
});

Deno.test("slow client: a head trickled a byte at a time is closed too (a deadline, not an idle gap)", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    const head = "GET /healthz HTTP/1.1\r\nHost: lore.example\r\n" + "X-Slow: a\r\n".repeat(10);
    const conn = await open(h, head[0]);
    await eventually("the head's deadline is armed", () => time.pendingOf(HEAD_MS) === 1);
    // a byte for every 100 ms of the service's clock, far below the idle limit, until the head's
    // deadline has passed
    for (let i = 1; time.pendingOf(HEAD_MS) === 1; i++) {
      await conn.send(head[i]);
      time.advance(100);
    }
    const r = await conn.done();
    assert.ok(r.closedByServer, "the server closed the connection");
    assert.equal(r.status, null);
    assert.equal(time.now(), HEAD_MS, "closed when the head's time ran out");
    assert.deepEqual(closes(h), [HEAD_LATE]);
  }, short(time));
});

Deno.test("slow client: a JSON body shorter than its Content-Length is 408, then closed; Core untouched", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    h.core.clearRequests();
    const conn = await open(
      h,
      "POST /api/lore HTTP/1.1\r\nHost: lore.example\r\nContent-Type: application/json\r\n" +
        'Content-Length: 100\r\n\r\n{"title":',
    );
    await eventually("the body's read waits", () => time.pendingOf(BODY_IDLE_MS) === 1);
    time.advance(BODY_IDLE_MS);
    const r = await conn.done();
    assert.equal(r.status, 408);
    const body = JSON.parse(r.body);
    assert.equal(body.error, "REQUEST_TIMEOUT");
    assert.equal(body.details.reason, "idle");
    assert.equal(r.headers.get("x-request-id"), body.requestId);
    assert.ok(
      logs(h).some((l) =>
        l.msg === "request" && l.requestId === body.requestId && l.status === 408
      ),
    );
    assert.ok(r.closedByServer, "the server closed the connection");
    assert.equal(h.core.requests.length, 0);
  }, short(time));
});

Deno.test("slow client: a stalled image upload is 408 and the half-made note is removed", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    const png = makePng(4, 4, () => [0, 0, 0]);
    // the whole image, so the note is made, then silence where 10,000 more bytes were declared
    const conn = await open(
      h,
      "POST /api/lore/upload-image HTTP/1.1\r\nHost: lore.example\r\nContent-Type: image/png\r\n" +
        `X-Host-Filename: stalled.png\r\nContent-Length: ${png.length + 10_000}\r\n\r\n${
          latin1(png)
        }`,
    );
    await eventually("the image note is made", () => notesTitled(h, "stalled.png").length === 1);
    await eventually("the upload waits for more", () => time.pendingOf(BODY_IDLE_MS) === 1);
    time.advance(BODY_IDLE_MS);
    const r = await conn.done();
    assert.equal(r.status, 408, r.text.slice(0, 300));
    assert.equal(JSON.parse(r.body).error, "REQUEST_TIMEOUT");
    assert.equal(JSON.parse(r.body).details.reason, "idle");
    assert.ok(r.closedByServer);
    assert.deepEqual(notesTitled(h, "stalled.png"), [], "the half-made note is removed");
  }, short(time));
});

Deno.test("slow client: an idle kept-alive connection is closed after its answers", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    // two requests on one connection, a pause between them, then silence
    const get = "GET /healthz HTTP/1.1\r\nHost: lore.example\r\n\r\n";
    const conn = await open(h, get);
    await eventually("the first answer", () => conn.responses() === 1);
    await eventually("idle once it is delivered", () => time.pendingOf(IDLE_MS) === 1);
    time.advance(IDLE_MS - 1); // the pause: shorter than the idle limit
    await conn.send(get);
    await eventually("the second answer", () => conn.responses() === 2);
    await eventually("idle again", () => time.pendingOf(IDLE_MS) === 1);
    time.advance(IDLE_MS - 1);
    assert.deepEqual(closes(h), [], "the idle time counts from the last answer");
    time.advance(1);
    const r = await conn.done();
    assert.equal(r.status, 200);
    assert.equal(conn.responses(), 2, "both requests answered");
    assert.match(r.text, /^HTTP\/1\.1 200 [^]*HTTP\/1\.1 200 /);
    assert.ok(r.closedByServer, "the idle connection was closed");
    assert.deepEqual(closes(h), ["idle"]);
    // a connection that never sends anything ends the same way
    const silent = await open(h, "");
    await eventually("the new connection waits", () => time.pendingOf(IDLE_MS) === 1);
    time.advance(IDLE_MS);
    const quiet = await silent.done();
    assert.ok(quiet.closedByServer);
    assert.equal(quiet.status, null);
    assert.deepEqual(closes(h), ["idle", "idle"]);
  }, short(time));
});

Deno.test("slow client: a slow backend is not a slow client; the answer waits for it", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    // Core answers after every client deadline has passed: the request is in progress, so the
    // connection stays open until the response is delivered
    const coreDelayMs = 2 * (HEAD_MS + BODY_IDLE_MS + IDLE_MS + LINGER_MS);
    h.core.fault({ path: `/etapi/notes/${W.charMira}`, delayMs: coreDelayMs, times: 1 });
    const answer = h.request(`/api/lore/${W.charMira}`);
    await eventually("Core holds the request", () => time.pendingOf(coreDelayMs) === 1);
    for (const ms of [HEAD_MS, BODY_IDLE_MS, IDLE_MS, LINGER_MS]) {
      assert.equal(time.pendingOf(ms), 0, `no client deadline of ${ms} ms is armed meanwhile`);
    }
    time.advance(coreDelayMs);
    const res = await answer;
    assert.equal(res.status, 200);
    assert.equal((await res.json()).noteId, W.charMira);
    assert.deepEqual(closes(h), []);
  }, short(time));
});

/**
 * Bodies must average 1000 bytes per second over each second of waiting, and nothing else can
 * end them (the idle limit and backend deadlines are far away; a backend call's deadline is told
 * apart by its duration). The relay's deadlines are those above: none is armed while a request
 * is in progress.
 */
const paced = (time: ManualDeadlines): HarnessOptions => ({
  deadlines: time,
  env: {
    CLIENT_DEADLINES: "on",
    CLIENT_HEADER_TIMEOUT_MS: String(HEAD_MS),
    CLIENT_IDLE_TIMEOUT_MS: String(IDLE_MS),
    CLIENT_BODY_MIN_BYTES_PER_SECOND: "1000",
    CLIENT_BODY_RATE_WINDOW_MS: "1000",
    CLIENT_BODY_TIMEOUT_MS: String(BACKEND_MS - 10_000),
    UPSTREAM_TIMEOUT_MS: String(BACKEND_MS),
  },
});

const uploadHead = (name: string, length: number) =>
  "POST /api/lore/upload-image HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n" +
  `X-Host-Filename: ${name}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;

Deno.test("slow client: an upload trickling below the minimum rate is 408, its note removed, the cut logged", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    const png = makePng(4, 4, () => [0, 0, 0]);
    const conn = await open(
      h,
      uploadHead("trickle.png", png.length + 10_000) + latin1(png),
    );
    await eventually("the image note is made", () => notesTitled(h, "trickle.png").length === 1);
    // a byte for every quarter second of the service's clock: never silent, far too slow
    await eventually("the upload is cut off", () => {
      if (conn.responses() > 0) return true;
      time.advance(250);
      void conn.send("x");
      return false;
    });
    const r = await conn.done();
    assert.equal(r.status, 408, r.body);
    const body = JSON.parse(r.body);
    assert.equal(body.error, "REQUEST_TIMEOUT");
    assert.match(
      body.message,
      /^The request body is too slow: \d+ bytes arrived in the last 1000 ms/,
    );
    assert.equal(body.details.reason, "slow");
    assert.equal(r.headers.get("x-request-id"), body.requestId);
    assert.ok(r.closedByServer, "the server closed the connection");
    assert.deepEqual(notesTitled(h, "trickle.png"), [], "the half-made note is removed");
    const cut = logs(h).find((l) => l.msg === "request body cut off");
    assert.equal(cut?.requestId, body.requestId);
    assert.equal(cut?.reason, "slow");
    assert.equal(cut?.route, "/api/lore/upload-image");
  }, paced(time));
});

Deno.test("slow client: an upload slow but above the minimum rate goes through whole", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    const png = makePng(96, 96, (x, y) => [(x * 37) % 256, (y * 91) % 256, (x * y * 13) % 256]);
    assert.ok(png.length > 10_000, `a PNG of ${png.length} bytes lasts several windows`);
    const conn = await open(h, uploadHead("steady.png", png.length));
    await conn.send(png.subarray(0, 500));
    await eventually("the image note is made", () => notesTitled(h, "steady.png").length === 1);
    // 500 bytes per 100 ms of the service's clock: 5000 bytes per second, five times the minimum.
    // Each piece is on its way to Core (its backend deadline restarted) before the clock moves,
    // so no byte the client sent is left waiting at the service when a window is judged.
    for (let at = 500; at < png.length; at += 500) {
      time.advance(100);
      await conn.send(png.subarray(at, at + 500));
      await eventually("the piece went on", () => time.setAt(BACKEND_MS).at(-1) === time.now());
    }
    const r = await conn.done();
    assert.equal(r.status, 201, r.body);
    assert.ok(r.closedByServer);
    const { noteId } = JSON.parse(r.body);
    assert.deepEqual(h.core.store.getContent(noteId), png);
    assert.ok(time.now() > 2_000, "the upload took several windows of the service's clock");
    assert.ok(!logs(h).some((l) => l.msg === "request body cut off"));
  }, paced(time));
});

Deno.test("slow client: a JSON body trickling below the minimum rate is 408; Core untouched", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    h.core.clearRequests();
    const conn = await open(
      h,
      "POST /api/lore HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        'Content-Length: 1000\r\n\r\n{"title":"',
    );
    // the head has reached the service (its deadline set and cleared) before the clock moves
    await eventually(
      "the request is in progress",
      () => time.setAt(HEAD_MS).length === 1 && time.pendingOf(HEAD_MS) === 0,
    );
    await eventually("the body is cut off", () => {
      if (conn.responses() > 0) return true;
      time.advance(250);
      void conn.send("a");
      return false;
    });
    const r = await conn.done();
    assert.equal(r.status, 408);
    const body = JSON.parse(r.body);
    assert.equal(body.error, "REQUEST_TIMEOUT");
    assert.equal(body.details.reason, "slow");
    assert.ok(r.closedByServer);
    assert.deepEqual(h.core.requests, []);
    assert.ok(
      logs(h).some((l) =>
        l.msg === "request body cut off" && l.requestId === body.requestId &&
        l.route === "/api/lore"
      ),
    );
  }, paced(time));
});

Deno.test("slow client: bodies past the per-client and the total bound are refused unread, 429 and 503", async () => {
  const time = manualDeadlines(); // stands still: the held uploads stay in progress
  const bounded = (env: Record<string, string>) => ({
    ...paced(time),
    env: { ...paced(time).env, ...env },
  });
  const png = makePng(4, 4, () => [0, 0, 0]);
  const hold = async (h: Harness, name: string) => {
    const conn = await open(h, uploadHead(name, png.length + 1000) + latin1(png));
    await eventually(`${name} is in progress`, () => notesTitled(h, name).length === 1);
    return conn;
  };
  const refusal = async (h: Harness, name: string) => {
    const r = await (await open(h, uploadHead(name, png.length) + latin1(png))).done();
    assert.ok(r.closedByServer, "the unread body's connection is closed");
    assert.equal(r.headers.get("retry-after"), "5");
    const body = JSON.parse(r.body);
    assert.equal(r.headers.get("x-request-id"), body.requestId);
    assert.deepEqual(notesTitled(h, name), [], "nothing created");
    return { status: r.status, body };
  };

  await withHarness(async (h) => {
    const first = await hold(h, "one.png");
    await hold(h, "two.png");
    const third = await refusal(h, "three.png");
    assert.equal(third.status, 429);
    assert.equal(third.body.error, "RATE_LIMITED");
    assert.deepEqual(third.body.details, { limit: 2, retryAfterSeconds: 5 });
    // one ends: its slot is free again
    await first.send("x".repeat(1000));
    assert.equal((await first.done()).status, 201);
    const fourth = await open(h, uploadHead("four.png", png.length) + latin1(png));
    assert.equal((await fourth.done()).status, 201);
  }, bounded({ MAX_BODIES_PER_CLIENT: "2" }));

  await withHarness(async (h) => {
    await hold(h, "one.png");
    await hold(h, "two.png");
    const third = await refusal(h, "three.png");
    assert.equal(third.status, 503);
    assert.equal(third.body.error, "SERVICE_BUSY");
  }, bounded({ MAX_BODIES_IN_FLIGHT: "2" }));
});
