/**
 * What a stopping instance does to the work in its hands: an event stream still open when the
 * grace period is over ends with an `error` event naming a retry (never cut off without one),
 * an AI call running on past its client's deadline gets the grace period to finish, its answer
 * kept for the retry, and an upload whose body is still arriving is received to its end. The Parser double's model runs on a clock only the test moves, so
 * nothing here depends on how fast anything runs.
 */
import assert from "node:assert/strict";
import { uploadHalfway } from "../helpers/halfway_upload.ts";
import { withHarness } from "../helpers/harness.ts";
import { eventually, manualDeadlines } from "../helpers/manual_deadlines.ts";

const TEXT = "Captain Ysolde Farrow charts the Amber Shoals with Tobin Reedwick at low tide.";
const roomy = { max: 1_000, windowMs: 60_000 };

Deno.test("shutdown: an open event stream ends with an error event naming a retry", () => {
  const time = manualDeadlines();
  return withHarness(async (h) => {
    const res = await fetch(`${h.url}/api/brain-dump/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ rawText: TEXT }),
    });
    assert.equal(res.status, 200);
    const text = res.text();
    // the model works on the test's clock, which never moves: only the stop can end the stream
    await eventually("the model works", () => time.pendingOf(600_000) === 1);
    await h.server.stop();
    const body = await text;
    const last = body.trim().split("\n\n").at(-1)!;
    assert.match(last, /^event: error\n/);
    const data = JSON.parse(last.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
    assert.equal(data.error, "SERVICE_BUSY");
    assert.deepEqual(data.details, { retry: "repeat the same request" });
    assert.match(data.message, /restarting: repeat the request/);
    assert.ok(h.logs.some((l) => l.includes('"stream end"') && l.includes('"reason":"error"')));
  }, {
    parserSession: true,
    deadlines: time,
    parser: { brainDump: { llmDelayMs: 600_000 }, rateLimits: { "brain-dump": roomy } },
    env: { SHUTDOWN_GRACE_MS: "0" },
  });
});

Deno.test("shutdown: an AI call past its client's deadline finishes within the grace period", () => {
  const time = manualDeadlines();
  return withHarness(async (h) => {
    const send = () =>
      h.requestJson<{ error?: string; cached?: boolean; created?: unknown[] }>(
        "/api/brain-dump",
        { method: "POST", json: { rawText: TEXT } },
      );
    const first = send();
    await eventually(
      "the client waits while the model works",
      () => time.pendingOf(300) === 1 && time.pendingOf(1_000) === 1,
    );
    time.advance(300);
    assert.equal((await first).status, 504);
    // the stop waits for the call still running; the model answers meanwhile
    const stopped = h.server.stop();
    let done = false;
    stopped.then(() => done = true);
    await eventually("the stop waits for the AI call", () => time.pendingOf(1_000) === 1);
    assert.equal(done, false, "the stop did not cut the call");
    time.advance(1_000);
    await stopped;
    assert.ok(
      h.logs.some((l) => l.includes("ai answer kept for a retry")),
      "the call ran to its end and its answer was kept",
    );
    assert.equal(
      h.parser!.requests.filter((r) => r.path === "/brain-dump/stream").length,
      1,
    );
  }, {
    parserSession: true,
    deadlines: time,
    parser: { brainDump: { llmDelayMs: 1_000 }, rateLimits: { "brain-dump": roomy } },
    env: { AI_TIMEOUT_MS: "300", SHUTDOWN_GRACE_MS: "600000" },
  });
});

Deno.test("shutdown: an upload whose body is still arriving is received and answered", () =>
  withHarness(async (h) => {
    const before = h.core.requests.length;
    let stopped: Promise<void> | undefined;
    // the runtime's own shutdown would cut the body off halfway
    const res = await uploadHalfway({
      url: h.url,
      filename: "reef-map.png",
      started: () => h.core.requests.length > before,
      between: () => stopped = h.server.stop(),
    });
    assert.equal(res.status, 201, await res.clone().text());
    const { noteId } = await res.json() as { noteId: string };
    await stopped;
    assert.equal(h.core.store.getNote(noteId)?.title, "reef-map.png");
  }, { env: { SHUTDOWN_GRACE_MS: "600000" } }));
