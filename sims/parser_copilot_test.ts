/**
 * The Parser double's article copilot against the real Parser: validation,
 * guard and rate-limit order, sessions, scope rules after the "LLM", SSE framing and order,
 * the knobs (pacing, stall, failure) and the records tests rely on.
 */
import assert from "node:assert/strict";
import { copilotSimState, SESSION_TOKEN_THRESHOLD } from "./parser_copilot.ts";
import { callParser, openParser, type ParserTarget, withParserSim } from "./parser_sim_client.ts";

const STREAM = "/copilot/article/stream";

const NOTE = "noteMira0001";
const OSKAR = "noteOskar001";

function note(noteId: string, title: string) {
  return {
    noteId,
    title,
    loreType: "character",
    contentHtml: `<p>${title}</p>`,
    parentNoteIds: ["root"],
    labels: [{ name: "lore", value: "" }],
    relations: [],
  };
}

/** A valid `ArticleCopilotBody` whose last user message is `message`. */
function body(message: string, extra: Record<string, unknown> = {}) {
  return {
    noteId: NOTE,
    transcript: [{ role: "user", content: message }],
    currentNote: note(NOTE, "Mira Tallowend"),
    linkedNotes: [note(OSKAR, "Oskar Venn")],
    ragContext: [{ noteId: "noteReef0001", title: "The Reef", excerpt: "Rocks.", score: 0.8 }],
    writableTargetIds: [NOTE, OSKAR],
    ...extra,
  };
}

/** Parses an SSE body into events (asserting the Parser's framing). */
function events(text: string): { event: string; data: Record<string, unknown> }[] {
  assert.ok(text.endsWith("\n\n"), "every event ends with a blank line");
  return text.slice(0, -2).split("\n\n").map((block) => {
    const m = /^event: ([a-z]+)\ndata: (.*)$/.exec(block);
    assert.ok(m, `one event line and one data line: ${JSON.stringify(block)}`);
    return { event: m[1], data: JSON.parse(m[2]) };
  });
}

/** One streamed turn: its answer's status and headers, and its `result` or `error` event. */
async function turn(sim: ParserTarget, message: string, extra?: Record<string, unknown>) {
  const res = await callParser(sim, STREAM, { body: body(message, extra) });
  const ev = res.status === 200 ? events(res.text) : [];
  return {
    status: res.status,
    headers: res.headers,
    // deno-lint-ignore no-explicit-any
    result: ev.find((e) => e.event === "result")?.data as any,
    error: ev.find((e) => e.event === "error")?.data,
  };
}

Deno.test("copilot sim: validation (422) runs before the guard (401), then the answer", () =>
  withParserSim(async (sim) => {
    const bad = await callParser(sim, STREAM, {
      body: { noteId: NOTE, transcript: [] },
      token: null,
    });
    assert.equal(bad.status, 422);
    const v = bad.json;
    assert.equal(v.type, "validation");
    assert.equal(v.property, "/currentNote");
    const anon = await callParser(sim, STREAM, { body: body("hello"), token: null });
    assert.equal(anon.status, 401);
    assert.deepEqual(anon.json, { error: "Unauthorized" });
    const empty = await callParser(sim, STREAM, {
      body: body("x", { transcript: [{ role: "user", content: "" }] }),
    });
    assert.equal(empty.status, 422, "content has minLength 1");
  }));

Deno.test("copilot sim: a turn creates a session, logs the call and answers deterministically", () =>
  withParserSim(async (sim) => {
    const res = await turn(sim, "What do we know?");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("RateLimit-Limit"), "20");
    const a = res.result;
    assert.match(a.sessionId, /^c[0-9a-z]{24}$/, "Prisma's cuid() default");
    assert.equal(
      a.assistantMessage,
      "Mira Tallowend links to 1 notes: Oskar Venn. Related lore: The Reef.",
    );
    assert.deepEqual(a.citations.map((c: { source: string }) => c.source), [
      "current",
      "linked",
      "rag",
    ]);
    assert.equal(a.proposal, null);
    const s = copilotSimState(sim.store).sessions.get(a.sessionId)!;
    assert.equal(s.title, "Mira Tallowend");
    assert.deepEqual(s.messages.map((m) => m.role), ["user", "assistant"]);
    assert.equal(s.messages[0].content, "What do we know?");
    const call = sim.store.llmCalls.at(-1)!;
    assert.equal(call.task, "article-copilot");
    assert.equal(call.model, "deepseek/deepseek-v4-pro", "falls back to the brain-dump chain");
    assert.ok(call.tokens > 0);

    // the same session continues; an unknown one is 404 JSON
    const b = (await turn(sim, "set mood to wary", { sessionId: a.sessionId })).result;
    assert.equal(b.sessionId, a.sessionId);
    assert.deepEqual(b.proposal.targets[0].labelUpserts, [{ name: "mood", value: "wary" }]);
    assert.equal(s.messages.length, 4);
    const unknown = await callParser(sim, STREAM, { body: body("hi", { sessionId: "nope" }) });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json, { error: "NOT_FOUND", message: "Session not found" });
  }));

Deno.test("copilot sim: another user's session is not found; wipe drops the user's sessions", () =>
  withParserSim(async (sim) => {
    const state = copilotSimState(sim.store);
    const a = (await turn(sim, "hi")).result;
    state.sessions.get(a.sessionId)!.userId = "someoneElse";
    assert.equal((await turn(sim, "hi", { sessionId: a.sessionId })).status, 404);
    for (const hook of sim.store.wipeHooks) hook("someoneElse");
    assert.equal(state.sessions.has(a.sessionId), false);
  }));

Deno.test("copilot sim: proposals from the transcript, and the scope rules after the LLM", () =>
  withParserSim(async (sim) => {
    const ask = (message: string) => turn(sim, message);
    const refusal = async (message: string) => (await ask(message)).error?.error;
    const ally = (await ask("add ally Oskar Venn")).result;
    assert.deepEqual(ally.proposal.targets[0].relationAdds, [{
      relationshipType: "ally",
      targetId: OSKAR,
      targetKind: "existing",
      description: "Named as ally in the conversation",
      bidirectional: true,
    }]);
    const created = (await ask("create a note about The Salt Witch as a deity")).result;
    const t = created.proposal.targets[0];
    assert.deepEqual([t.kind, t.targetId, t.title, t.loreType], [
      "create",
      "new_the_salt_witch",
      "The Salt Witch",
      "deity",
    ]);
    assert.deepEqual(t.relationAdds[0], {
      relationshipType: "related_to",
      targetId: NOTE,
      targetKind: "existing",
      bidirectional: true,
    });

    // a related (rag) note that is not writable breaks the scope rule: an error event
    assert.equal(
      await refusal("add enemy The Reef"),
      "Relation targets non-writable note noteReef0001",
    );
    assert.equal(
      await refusal(`propose: {"targets":[{"kind":"update","targetId":"other"}]}`),
      "Proposal targets non-writable note other",
    );
    assert.equal(
      await refusal(
        `propose: {"targets":[{"kind":"create","targetId":"n1","title":"X","loreType":"item",` +
          `"contentHtml":"<p>x</p>"}]}`,
      ),
      "Create target n1 must relate to the current note",
    );
    assert.equal(
      await refusal(
        `propose: {"targets":[{"kind":"update","targetId":"${NOTE}","relationAdds":[` +
          `{"relationshipType":"ally","targetId":"ghost","targetKind":"new"}]}]}`,
      ),
      "Relation targets unknown new note ghost",
    );
    assert.equal(
      await refusal(
        `propose: {"targets":[{"kind":"update","targetId":"${NOTE}","relationAdds":[` +
          `{"relationshipType":"friend","targetId":"${OSKAR}","targetKind":"existing"}]}]}`,
      ),
      "Copilot response failed schema validation",
    );
    assert.equal(await refusal("propose: {not json"), "Copilot returned invalid JSON");
  }));

Deno.test("copilot sim: the stream's events, order and framing; errors after the LLM", () =>
  withParserSim(async (sim) => {
    const res = await callParser(sim, STREAM, {
      body: body("add ally Oskar Venn"),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    const text = res.text;
    assert.ok(!text.includes(": keepalive"), "no heartbeat");
    const ev = events(text);
    assert.deepEqual(ev[0], {
      event: "status",
      data: { stage: "llm", message: "Generating response..." },
    });
    const names = ev.map((e) => e.event);
    assert.deepEqual(names.slice(0, 3), ["status", "reasoning", "reasoning"]);
    assert.deepEqual(names.slice(-2), ["result", "done"]);
    assert.ok(names.slice(3, -2).every((n) => n === "token"));
    assert.ok(ev.every((e) => !("type" in e.data)), "no type field in data");
    const raw = ev.filter((e) => e.event === "token").map((e) => e.data.content).join("");
    const result = ev.at(-2)!.data;
    const { sessionId, ...rest } = result;
    assert.deepEqual(JSON.parse(raw), rest, "tokens are the raw JSON of the result");
    const s = copilotSimState(sim.store).sessions.get(sessionId as string)!;
    assert.equal(s.messages.at(-1)!.content, raw, "the raw token text is the assistant message");
    assert.deepEqual(Object.keys(ev.at(-1)!.data).sort(), ["latencyMs", "model", "tokensUsed"]);

    // a scope violation: error instead of result, then done
    const bad = events(
      (await callParser(sim, STREAM, { body: body("add enemy The Reef") })).text,
    );
    assert.deepEqual(bad.slice(-2).map((e) => e.event), ["error", "done"]);
    assert.deepEqual(bad.at(-2)!.data, {
      error: "Relation targets non-writable note noteReef0001",
    });

    // an unknown session: 404 JSON before any SSE
    const gone = await callParser(sim, STREAM, {
      body: body("hi", { sessionId: "missing" }),
    });
    assert.equal(gone.status, 404);
    assert.match(gone.headers.get("content-type")!, /^application\/json/);
    assert.deepEqual(gone.json, { error: "NOT_FOUND", message: "Session not found" });
  }));

Deno.test("copilot sim: no model, or an LLM stream failure, ends with a terminal error", async () => {
  await withParserSim(async (sim) => {
    const ev = events(
      (await callParser(sim, STREAM, { body: body("hi") })).text,
    );
    assert.deepEqual(ev.map((e) => e.event), ["status", "error"]);
    assert.deepEqual(ev[1].data, {
      error: 'No models configured for task "article-copilot"',
      code: "NO_MODEL",
    });
  }, { models: {} });
  await withParserSim(async (sim) => {
    const res = await callParser(sim, STREAM, { body: body("hi") });
    const ev = events(res.text);
    assert.equal(ev.at(-1)!.event, "error");
    assert.deepEqual(ev.at(-1)!.data, { error: "Stream stalled", code: "TIMEOUT" });
    assert.ok(!ev.some((e) => e.event === "done" || e.event === "result"));
  }, { copilot: { streamFailure: { error: "Stream stalled", code: "TIMEOUT" } } });
});

Deno.test("copilot sim: pacing, a stall, and the client's abort is recorded", () =>
  withParserSim(async (sim) => {
    const ac = new AbortController();
    const res = await openParser(sim, STREAM, {
      body: body("hi"),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/\n\n/g) ?? []).length < 2) {
      text += new TextDecoder().decode((await reader.read()).value);
    }
    ac.abort();
    await reader.cancel().catch(() => {});
    const state = copilotSimState(sim.store);
    for (let i = 0; i < 3_000 && state.aborted.length === 0; i++) { // a guard only
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(state.aborted.length, 1);
    assert.equal(state.aborted[0].eventsSent, 2, "the stall held the stream after two events");
  }, { copilot: { paceMs: 5, stallAfterEvents: 2 } }));

Deno.test("copilot sim: the copilot rate-limit group, and compaction of a long session", () =>
  withParserSim(async (sim) => {
    const first = (await turn(sim, "hi")).result;
    const s = copilotSimState(sim.store).sessions.get(first.sessionId)!;
    s.tokensAccumulated = SESSION_TOKEN_THRESHOLD;
    const second = await turn(sim, "hi", { sessionId: first.sessionId });
    assert.equal(second.status, 200);
    assert.match(s.summary!, /^Summary of 2 earlier messages/);
    assert.equal(s.messages.length, 2);
    const limited = await callParser(sim, STREAM, { body: body("hi") });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "60");
    assert.deepEqual(limited.json, {
      error: "Rate limit exceeded for AI tools.",
      code: "RATE_LIMITED",
    });
  }, { rateLimits: { copilot: { max: 2, windowMs: 60_000 } } }));
