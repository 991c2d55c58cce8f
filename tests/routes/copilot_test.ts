/**
 * The article copilot over HTTP against both doubles: the context the Parser is given, answers
 * and proposals passed through, bad input kept away from the backends, the stream's own status
 * event ahead of the context work and the Parser's events after it, client aborts, and applying
 * a proposal with an exact per-target report. The shared error matrix is in
 * parser_error_paths_test.ts and error_paths_test.ts (samples in samples/copilot.ts).
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { eventually, type ManualDeadlines, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { copilotSimState } from "../../sims/parser_copilot.ts";
import { W } from "../../sims/world.ts";

const MIRA = W.charMira;
const chatPath = (id: string = MIRA) => `/api/lore/${id}/copilot/chat`;
const streamPath = (id: string = MIRA) => `/api/lore/${id}/copilot/stream`;
const applyPath = (id: string = MIRA) => `/api/lore/${id}/copilot/apply`;
const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  transcript: [{ role: "user", content }],
  ...extra,
});
const withParser = (fn: (h: Harness) => Promise<void>, parser: Record<string, unknown> = {}) =>
  withHarness(fn, { parser, parserSession: true });

/** {@linkcode withParser} with the service and the doubles on a clock the test moves. */
function withParserOnClock(
  fn: (h: Harness, time: ManualDeadlines) => Promise<void>,
  parser: Record<string, unknown> = {},
  env: Record<string, string> = {},
) {
  const time = manualDeadlines();
  return withHarness((h) => fn(h, time), { parser, parserSession: true, env, deadlines: time });
}

/** Parser requests to feature routes (not credential lookups). */
const parserCalls = (h: Harness) =>
  h.parser!.requests.filter((r) =>
    !r.path.startsWith("/internal/") && !r.path.startsWith("/api/auth/")
  );

/** The next copilot body the Parser double received. */
const lastBody = (h: Harness) => copilotSimState(h.parser!.store).bodies.at(-1)!;

/** Makes the Parser's semantic index answer with these passages. */
function ragAnswers(h: Harness, results: unknown[]) {
  h.parser!.fault({ path: "/rag/query", status: 200, body: JSON.stringify({ results }) });
}

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * Reads an SSE response event by event into `out` (a test may watch it grow); `stopAfter` ends
 * early (then cancels).
 */
async function readEvents(
  res: Response,
  stopAfter?: (e: SseEvent) => boolean,
  out: SseEvent[] = [],
): Promise<SseEvent[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const m = /^event: (\w+)\ndata: (.*)$/.exec(block);
      assert.ok(m, `an event: ${JSON.stringify(block)}`);
      const e = { event: m[1], data: JSON.parse(m[2]) };
      out.push(e);
      if (stopAfter?.(e)) {
        await reader.cancel();
        return out;
      }
    }
  }
  assert.equal(buffer, "", "the stream ends on an event boundary");
  return out;
}

async function startStream(h: Harness, body: unknown, id: string = MIRA) {
  const res = await h.request(streamPath(id), { method: "POST", json: body });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
  return res;
}

async function stream(h: Harness, body: unknown, id: string = MIRA) {
  return await readEvents(await startStream(h, body, id));
}

// ---- chat -------------------------------------------------------------------------------------

Deno.test("chat: the Parser gets the note, its linked notes, related lore and the writable set", () =>
  withParser(async (h) => {
    await h.etapi(`/notes/${MIRA}/content`, {
      method: "PUT",
      text: `${h.core.store.getContent(MIRA)}<script>steal()</script>`,
    });
    ragAnswers(h, [
      { noteId: MIRA, noteTitle: "Mira Tallowend", content: "self", score: 0.99 },
      { noteId: W.locReef, noteTitle: "The Knucklebone Reef", content: "Charts", score: 0.7 },
    ]);
    const transcript = [
      { role: "user", content: "Who is Mira?" },
      { role: "assistant", content: "A pilot." },
      { role: "user", content: "What do we know?" },
    ];
    const r = await h.requestJson(chatPath(), { method: "POST", json: { transcript } });
    assert.equal(r.status, 200);
    assertNoSecrets(h, JSON.stringify(r.body));

    const body = lastBody(h);
    assert.equal(body.noteId, MIRA);
    assert.deepEqual(body.transcript, transcript);
    const current = body.currentNote as unknown as Record<string, unknown>;
    assert.equal(current.title, "Mira Tallowend");
    assert.equal(current.loreType, "character");
    assert.match(current.contentHtml as string, /Mira Tallowend pilots ships through the reefs/);
    assert.ok(!(current.contentHtml as string).includes("<script"), "sanitized before it leaves");
    const linked = body.linkedNotes.map((n) => n.noteId);
    assert.deepEqual(
      [...linked].sort(),
      [W.charOskar, W.locHarbor, W.faction].sort(),
      "relations and content links; the portrait image is not an article",
    );
    assert.deepEqual(
      [...body.writableTargetIds].sort(),
      [MIRA, W.charOskar, W.locHarbor, W.faction].sort(),
    );
    assert.deepEqual(body.ragContext, [
      { noteId: W.locReef, title: "The Knucklebone Reef", excerpt: "Charts", score: 0.7 },
    ]);
    const rag = h.parser!.requests.find((q) => q.path === "/rag/query")!;
    assert.deepEqual(JSON.parse(rag.bodyText!), { text: "What do we know?", topK: 5 });

    // the answer is the Parser's, passed through
    assert.match(r.body.sessionId as string, /^c[0-9a-z]{24}$/);
    assert.equal(
      r.body.assistantMessage,
      "Mira Tallowend links to 3 notes: " +
        `${body.linkedNotes.map((n) => n.title).join(", ")}. Related lore: The Knucklebone Reef.`,
    );
    assert.equal(r.body.proposal, null);
    assert.deepEqual((r.body.citations as { source: string }[]).map((c) => c.source), [
      "current",
      "linked",
      "linked",
      "linked",
      "rag",
    ]);

    // the same session continues, with the proposal passed on
    const next = await h.requestJson(chatPath(), {
      method: "POST",
      json: ask("add ally Saltmarrow Harbor", { sessionId: r.body.sessionId }),
    });
    assert.equal(next.body.sessionId, r.body.sessionId);
    assert.equal(lastBody(h).sessionId, r.body.sessionId);
    assert.deepEqual(next.body.proposal, {
      targets: [{
        kind: "update",
        targetId: MIRA,
        labelUpserts: [],
        labelDeletes: [],
        relationAdds: [{
          relationshipType: "ally",
          targetId: W.locHarbor,
          targetKind: "existing",
          description: "Named as ally in the conversation",
          bidirectional: true,
        }],
        relationDeletes: [],
        rationale: "Requested in the conversation.",
      }],
    });
  }));

Deno.test("chat: the front end's `messages`; the Parser gets the latest 50, no empty answers", () =>
  withParser(async (h) => {
    const turns = Array.from({ length: 30 }, (_, i) => [
      { role: "user", content: `Question ${i}` },
      // a turn that failed before its first token leaves the assistant's message empty
      { role: "assistant", content: i === 29 ? "" : `Answer ${i}` },
    ]).flat();
    const messages = [...turns, { role: "user", content: "Who is Mira?" }];
    const r = await h.requestJson(chatPath(), { method: "POST", json: { messages } });
    assert.equal(r.status, 200);
    const sent = lastBody(h).transcript;
    assert.equal(sent.length, 50);
    assert.deepEqual(sent.at(-1), { role: "user", content: "Who is Mira?" });
    assert.deepEqual(sent.at(-2), { role: "user", content: "Question 29" });
    assert.ok(sent.every((m) => m.content !== ""));
    // the same through the stream, as the front end sends it
    const events = await stream(h, { messages: [{ role: "user", content: "Who is Mira?" }] });
    assert.ok(events.some((e) => e.event === "result"));
    assert.deepEqual(lastBody(h).transcript, [{ role: "user", content: "Who is Mira?" }]);
  }));

Deno.test("chat: bad input is a 400 and reaches neither backend", () =>
  withParser(async (h) => {
    const long = "x".repeat(20_001);
    const bodies: unknown[] = [
      {},
      { transcript: [] },
      { transcript: [{ role: "assistant", content: "I answer last" }] },
      { transcript: [{ role: "user", content: "   " }] },
      { transcript: [{ role: "system", content: "hi" }] },
      { transcript: [{ role: "user", content: long }] },
      { transcript: Array.from({ length: 1001 }, () => ({ role: "user", content: "hi" })) },
      { messages: [{ role: "user", content: "   " }] },
      {
        transcript: [{ role: "user", content: "hi" }],
        messages: [{ role: "user", content: "hi" }],
      },
      ...[
        "../../admin",
        "..",
        "a/b",
        "a\\b",
        "%2e%2e",
        "a?b",
        "a#b",
        "a b",
        "a\u0000",
        "",
        "c".repeat(129),
      ]
        .map((sessionId) => ask("hi", { sessionId })),
      ask("hi", { noteId: "someOtherNote" }),
    ];
    h.core.clearRequests();
    h.parser!.clearRequests();
    for (const json of bodies) {
      const r = await h.requestJson(chatPath(), { method: "POST", json });
      assert.equal(r.status, 400, JSON.stringify(json).slice(0, 80));
      assert.equal(r.body.error, "INVALID_REQUEST");
      const s = await h.request(streamPath(), { method: "POST", json });
      assert.equal(s.status, 400);
      assert.match(s.headers.get("content-type")!, /^application\/json/);
      await s.body?.cancel();
    }
    const badId = await h.requestJson(chatPath("bad-id!"), { method: "POST", json: ask("hi") });
    assert.equal(badId.status, 400);
    assert.deepEqual(parserCalls(h), []);
    assert.deepEqual(h.core.requests, []);
  }));

Deno.test("chat: an unknown session is the Parser's 404; a missing note is 404 before the Parser", () =>
  withParser(async (h) => {
    const r = await h.requestJson(chatPath(), {
      method: "POST",
      json: ask("hi", { sessionId: "noSuchSession" }),
    });
    assert.equal(r.status, 404);
    assert.equal(r.body.error, "NOT_FOUND");
    assert.deepEqual(r.body.details, { service: "parser", upstreamCode: "NOT_FOUND" });

    h.parser!.clearRequests();
    const missing = await h.requestJson(chatPath("noSuchNote01"), {
      method: "POST",
      json: ask("hi"),
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, "NOT_FOUND");
    assert.ok(!parserCalls(h).some((q) => q.path.startsWith("/copilot/")));
  }));

Deno.test("chat: a failing semantic index does not fail the turn; a broken answer is a 502", () =>
  withParser(async (h) => {
    h.parser!.fault({ path: "/rag/query", status: 500, body: "embedding down", times: 1 });
    const r = await h.requestJson(chatPath(), { method: "POST", json: ask("What now?") });
    assert.equal(r.status, 200);
    assert.deepEqual(lastBody(h).ragContext, []);
    assert.ok(h.logs.some((l) => l.includes("copilot: related lore unavailable")));

    // the "LLM" relates Mira to a related-lore note it may not write: the Parser's 500 text
    ragAnswers(h, [{ noteId: W.locReef, noteTitle: "The Reef", content: "x", score: 0.5 }]);
    const bad = await h.requestJson(chatPath(), {
      method: "POST",
      json: ask("add enemy The Reef"),
    });
    assert.equal(bad.status, 502);
    assert.equal(bad.body.error, "UPSTREAM_ERROR");
    assert.ok(!JSON.stringify(bad.body).includes("non-writable"), "the Parser's text stays out");
  }));

Deno.test("chat/stream: no Core credentials (not logged in) is a JSON 401 before anything is sent", () =>
  withHarness(async (h) => {
    for (const path of [chatPath(), streamPath()]) {
      const r = await h.requestJson(path, { method: "POST", json: ask("hi") });
      assert.equal(r.status, 401);
      assert.equal(r.body.error, "UNAUTHORIZED");
      assert.deepEqual(r.body.details, { service: "core" });
    }
    assert.deepEqual(parserCalls(h), []);
  }, { parser: true, parserSession: true, noCoreCredentials: true }));

// ---- stream -----------------------------------------------------------------------------------

Deno.test("stream: our context status, then the Parser's events in order", () =>
  withParser(async (h) => {
    const events = await stream(h, ask("create a note about The Salt Witch as a deity"));
    const names = events.map((e) => e.event);
    assert.deepEqual(names.slice(0, 5), ["status", "status", "status", "reasoning", "reasoning"]);
    assert.deepEqual(names.slice(-2), ["result", "done"]);
    assert.ok(names.slice(5, -2).length > 1 && names.slice(5, -2).every((n) => n === "token"));
    assert.deepEqual(events[0].data, {
      stage: "context",
      message: "Reading the note, its links and related lore...",
    });
    assert.equal(events[1].data.stage, "context");
    assert.match(events[1].data.message as string, /^Context ready: 3 linked notes, \d+ related/);
    assert.deepEqual(events[2].data, { stage: "llm", message: "Generating response..." });
    const result = events.at(-2)!.data as { proposal: { targets: { kind: string }[] } };
    assert.equal(result.proposal.targets[0].kind, "create");
    const tokens = events.filter((e) => e.event === "token").map((e) => e.data.content).join("");
    const { sessionId: _, ...rest } = result as unknown as Record<string, unknown>;
    assert.deepEqual(JSON.parse(tokens), rest);
    assert.equal(lastBody(h).writableTargetIds[0], MIRA);
  }));

Deno.test("stream: the first status arrives while Core is still loading the context", () =>
  withParserOnClock(async (h, time) => {
    const delayMs = 800;
    h.core.fault({ method: "GET", path: `/etapi/notes/${MIRA}`, delayMs });
    const events: SseEvent[] = [];
    const reading = readEvents(await startStream(h, ask("What do we know?")), undefined, events);
    await eventually("the first event", () => events.length > 0);
    assert.equal(events[0].data.stage, "context");
    // Core answers only when the test lets its delay pass: the first event came before that
    await eventually("Core holds the note read", () => time.pendingOf(delayMs) === 1);
    const ready = (e: SseEvent) => !!e.data.message?.toString().startsWith("Context ready");
    assert.ok(!events.some(ready), "the context is not ready yet");
    time.advance(delayMs);
    await reading;
    assert.ok(events.some(ready));
    assert.equal(events.at(-1)!.event, "done");
  }));

Deno.test("stream: an unknown session ends the stream with one error event in our shape", () =>
  withParser(async (h) => {
    const events = await stream(h, ask("hi", { sessionId: "noSuchSession" }));
    assert.deepEqual(events.map((e) => e.event), ["status", "status", "error"]);
    const err = events[2].data;
    assert.equal(err.error, "NOT_FOUND");
    assert.equal(typeof err.message, "string");
    assert.equal(typeof err.requestId, "string");
  }));

Deno.test("stream: the client leaving reaches the Parser double", () =>
  withParserOnClock(async (h, time) => {
    const ac = new AbortController();
    const res = await h.request(streamPath(), {
      method: "POST",
      json: ask("What do we know?"),
      signal: ac.signal,
    });
    const seen: SseEvent[] = [];
    const reasoning = () => seen.at(-1)?.event === "reasoning";
    const reading = readEvents(res, (e) => e.event === "reasoning", seen);
    // the double paces its events on the test's clock: one more each time the pace passes
    while (!reasoning()) {
      await eventually("the double paces", () => reasoning() || time.pendingOf(100) === 1);
      if (reasoning()) break;
      const before = seen.length;
      time.advance(100);
      await eventually("the next event", () => seen.length > before);
    }
    ac.abort();
    await reading;
    const state = copilotSimState(h.parser!.store);
    await eventually("the double saw the client go away", () => state.aborted.length > 0);
    assert.equal(state.aborted.length, 1);
    assert.ok(state.aborted[0].eventsSent < 11, "before the double's last event");
  }, { copilot: { paceMs: 100 } }));

Deno.test("stream: a stalled Parser ends with a terminal timeout event", () =>
  withParserOnClock(
    async (h, time) => {
      const events: SseEvent[] = [];
      const reading = readEvents(await startStream(h, ask("hi")), undefined, events);
      await eventually(
        "the events before the stall, and the stream waiting for more",
        () => events.length === 3 && time.pendingOf(300) === 1,
      );
      time.advance(300); // nothing more arrives: the stream's idle deadline passes
      await reading;
      assert.deepEqual(events.map((e) => e.event), ["status", "status", "status", "error"]);
      assert.equal(events[3].data.error, "UPSTREAM_TIMEOUT");
    },
    { copilot: { stallAfterEvents: 1 } },
    { STREAM_IDLE_TIMEOUT_MS: "300" },
  ));

// ---- apply ------------------------------------------------------------------------------------

interface Note {
  title: string;
  attributes: { noteId: string; type: string; name: string; value: string }[];
}

/** What a user would see of a note: title, own attributes, content. */
async function snapshot(h: Harness, id: string) {
  const note = await h.etapi<Note>(`/notes/${id}`);
  const res = await fetch(`${h.core.url}/etapi/notes/${id}/content`, {
    headers: { authorization: h.core.token },
  });
  return {
    title: note.title,
    attributes: note.attributes.filter((a) => a.noteId === id)
      .map((a) => `${a.type}:${a.name}=${a.value}`).sort(),
    content: await res.text(),
  };
}

Deno.test("apply: one target written, one refused, one rolled back — an exact report", () =>
  withParser(async (h) => {
    const harborBefore = await snapshot(h, W.locHarbor);
    const oskarBefore = await snapshot(h, W.charOskar);
    h.core.fault({ method: "PUT", path: `/etapi/notes/${W.locHarbor}/content`, status: 500 });
    const r = await h.requestJson(applyPath(), {
      method: "POST",
      json: {
        proposal: {
          targets: [
            {
              kind: "update",
              targetId: MIRA,
              contentHtml: "<p>Mira keeps the lamp now.<script>alert(1)</script></p>",
              labelUpserts: [{ name: "mood", value: "wary" }],
              labelDeletes: [],
              relationAdds: [{
                relationshipType: "member_of",
                targetId: W.faction,
                targetKind: "existing",
                description: "Owes the Guild",
                bidirectional: true,
              }],
              relationDeletes: [],
              rationale: "From the chat",
            },
            {
              kind: "update",
              targetId: W.charOskar,
              labelUpserts: [{ name: "gmOnly", value: "" }],
              rationale: "",
            },
            {
              kind: "update",
              targetId: W.locHarbor,
              title: "Saltmarrow Port",
              contentHtml: "<p>Renamed.</p>",
              rationale: "",
            },
            {
              kind: "update",
              targetId: W.charIselde,
              title: "Not reachable from Mira",
              rationale: "",
            },
          ],
        },
      },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      applied: {
        updatedNoteIds: [MIRA, W.faction],
        createdNoteIds: [],
        skipped: [W.charOskar, W.charIselde],
        failed: [W.locHarbor],
      },
      updatedNoteIds: [MIRA, W.faction],
      createdNoteIds: [],
      created: [],
      skipped: [
        { targetId: W.charOskar, reason: "#gmOnly cannot be changed by the copilot" },
        {
          targetId: W.charIselde,
          reason: "not writable from this note (only the note itself and the lore notes it " +
            "links to)",
        },
      ],
      failed: [{
        targetId: W.locHarbor,
        error: "UPSTREAM_ERROR",
        message: "Core failed to handle the request (while trying to replace the content; " +
          "nothing was changed)",
        details: {
          service: "core",
          upstreamCode: "GENERIC",
          failedStep: "replace the content",
          rolledBack: ["rename the note"],
        },
      }],
    });
    // the failed and the refused targets are exactly as before
    assert.deepEqual(await snapshot(h, W.locHarbor), harborBefore);
    assert.deepEqual(await snapshot(h, W.charOskar), oskarBefore);
    // the written one completely, sanitized
    const mira = await snapshot(h, MIRA);
    assert.equal(mira.content, "<p>Mira keeps the lamp now.</p>");
    for (const a of ["label:mood=wary", `relation:relMemberOf=${W.faction}`]) {
      assert.ok(mira.attributes.includes(a), a);
    }
    assert.ok(
      mira.attributes.includes(`label:relationNote=member_of:${W.faction}: Owes the Guild`),
    );
    const guild = await snapshot(h, W.faction);
    assert.ok(guild.attributes.includes(`relation:relMemberOf=${MIRA}`), "inverse relation");
    assert.ok(h.core.requests.every((q) => !q.bodyText?.includes("<script")), "no script sent");
  }));

Deno.test("apply: a chat proposal round trip creates the note under the lore root", () =>
  withParser(async (h) => {
    const chat = await h.requestJson(chatPath(), {
      method: "POST",
      json: ask("create a note about The Salt Witch as a deity"),
    });
    const r = await h.requestJson(applyPath(), {
      method: "POST",
      json: { proposal: chat.body.proposal },
    });
    assert.equal(r.status, 200);
    const body = r.body as { createdNoteIds: string[]; updatedNoteIds: string[] };
    assert.equal(body.createdNoteIds.length, 1);
    assert.deepEqual(body.updatedNoteIds, [MIRA], "Mira got the inverse relation");
    const id = body.createdNoteIds[0];
    const note = await h.etapi<Note & { parentNoteIds: string[] }>(`/notes/${id}`);
    assert.equal(note.title, "The Salt Witch");
    assert.deepEqual(note.parentNoteIds, ["root"], "LORE_ROOT_NOTE_ID's default");
    const own = note.attributes.filter((a) => a.noteId === id).map((a) => `${a.name}=${a.value}`);
    assert.deepEqual(own.sort(), [
      "lore=",
      "loreType=deity",
      `relRelatedTo=${MIRA}`,
      "template=_template_deity",
    ]);
  }));

Deno.test("apply: bad proposals are a 400 and reach nothing; system notes are refused", () =>
  withParser(async (h) => {
    const target = { kind: "update", targetId: MIRA };
    const bodies: unknown[] = [
      {},
      { proposal: null },
      { proposal: { targets: [] } },
      { proposal: { targets: [target, target] } },
      { proposal: { targets: [{ ...target, kind: "delete" }] } },
      {
        proposal: {
          targets: [{
            ...target,
            relationAdds: [{ relationshipType: "friend", targetId: "x", targetKind: "existing" }],
          }],
        },
      },
      { proposal: { targets: [{ ...target, loreType: "spaceship" }] } },
      {
        proposal: {
          targets: Array.from({ length: 51 }, (_, i) => ({ ...target, targetId: `t${i}` })),
        },
      },
      { proposal: { targets: [target] }, extra: true },
      { proposal: { targets: [target] }, approvedTargetIds: [] },
      { proposal: { targets: [target] }, approvedTargetIds: [W.charOskar] },
    ];
    h.core.clearRequests();
    for (const json of bodies) {
      const r = await h.requestJson(applyPath(), { method: "POST", json });
      assert.equal(r.status, 400, JSON.stringify(json).slice(0, 80));
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    const system = await h.requestJson(applyPath("_share"), {
      method: "POST",
      json: { proposal: { targets: [{ kind: "update", targetId: "_share" }] } },
    });
    assert.equal(system.status, 400);
    assert.deepEqual(h.core.requests, []);
  }));
