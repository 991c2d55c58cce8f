/**
 * Brain-dump routes over HTTP through the real app against the Core and Parser doubles: the
 * three modes, commit, history, diffs, batches, the SSE stream (progressive delivery, abort,
 * stall, error shapes, keepalives, pre-stream errors) and the Parser's rate limit. The shared
 * Parser error matrix runs over samples/brain_dump.ts in parser_error_paths_test.ts.
 */
import assert from "node:assert/strict";
import {
  assertNoSecrets,
  type Harness,
  type HarnessOptions,
  withHarness,
} from "../helpers/harness.ts";
import { eventually, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { rawExchange } from "../helpers/raw_http.ts";
import { MAX_BATCH_ITEMS } from "../../src/routes/brain_dump_batches.ts";
import { MAX_COMMIT_ENTITIES } from "../../src/routes/brain_dump_runs.ts";
import { rewriteSseEvents } from "../../src/routes/parser_proxy.ts";
import type { BrainDumpSimOptions } from "../../sims/parser_brain_dump.ts";
import { W } from "../../sims/world.ts";

const TEXT = "Captain Hollis Marrow sails the Gull Queen out of Saltmarrow Harbor at dawn. " +
  "Hollis Marrow owes the Tidewater Company a fortune.";
const SHORT = "Ada Quill met Bo Reed.";
/** The real Parser's brain-dump history ids: `crypto.randomUUID()`. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// deno-lint-ignore no-explicit-any
type Json = any;

/** A harness with the Parser double (brain-dump knobs `opts`, a roomy rate limit). */
function withBrainDump(
  fn: (h: Harness, opts: BrainDumpSimOptions) => Promise<void>,
  o: { brainDump?: BrainDumpSimOptions; max?: number } & HarnessOptions = {},
): Promise<void> {
  const opts = o.brainDump ?? {};
  const { brainDump: _b, max, ...harness } = o;
  return withHarness((h) => fn(h, opts), {
    parserSession: true,
    ...harness,
    parser: {
      brainDump: opts,
      rateLimits: { "brain-dump": { max: max ?? 1_000, windowMs: 60_000 } },
    },
  });
}

/** Parser calls to the brain-dump group, as "METHOD /path?query". */
function parserCalls(h: Harness): string[] {
  return h.parser!.requests.filter((r) => r.path.startsWith("/brain-dump"))
    .map((r) => `${r.method} ${r.path}${r.search}`);
}

const post = (json: unknown): RequestInit & { json: unknown } => ({ method: "POST", json });

/** SSE events of a stream body (comments left out), data parsed. */
function events(text: string): { event: string; data: Record<string, unknown> }[] {
  return text.split("\n\n").filter((b) => b.startsWith("event: ")).map((b) => {
    const [ev, data] = b.split("\n");
    return { event: ev.slice("event: ".length), data: JSON.parse(data.slice("data: ".length)) };
  });
}

function loreTitled(h: Harness, title: string) {
  return h.core.store.search("#lore").hits.map((x) => h.core.store.getNote(x.noteId)!)
    .filter((n) => n.title === title);
}

Deno.test("dev story: an auto brain dump creates lore that GET /api/lore then lists", () =>
  withBrainDump(async (h) => {
    const res = await h.requestJson("/api/brain-dump", post({ rawText: TEXT }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const body = res.body as Json;
    assert.equal(body.mode, "auto");
    assert.equal(body.cached, false);
    assert.deepEqual(
      body.created.map((n: { title: string; type: string }) => [n.title, n.type]),
      [
        ["Captain Hollis Marrow", "character"],
        ["Gull Queen", "character"],
        ["Hollis Marrow", "character"],
        ["Tidewater Company", "faction"],
      ],
    );
    assert.deepEqual(body.updated, [
      { noteId: W.locHarbor, title: "Saltmarrow Harbor", type: "location" },
    ]);
    assert.deepEqual(body.skipped, []);
    assert.ok(Array.isArray(body.duplicates) && Array.isArray(body.relations));
    assert.equal("reindexIds" in body, false);

    const listed = await h.requestJson<{ noteId: string; title: string }[]>("/api/lore");
    assert.equal(listed.status, 200);
    const titles = listed.body.map((n) => n.title);
    for (const t of ["Captain Hollis Marrow", "Gull Queen", "Tidewater Company"]) {
      assert.ok(titles.includes(t), `${t} is listed`);
    }
    const company = body.created.find((n: { title: string }) => n.title === "Tidewater Company");
    const note = await h.requestJson<Record<string, unknown>>(`/api/lore/${company.noteId}`);
    assert.equal(note.body.loreType, "faction");
    const preview = await h.request(`/api/lore/${W.locHarbor}/preview?mode=gm`);
    assert.match(await preview.text(), /sails the Gull Queen out of Saltmarrow Harbor/);

    // the same text again: the Parser's idempotency cache answers, nothing new is written
    const again = await h.requestJson("/api/brain-dump", post({ rawText: TEXT }));
    assert.equal(again.body.cached, true);
    assert.equal(again.body.summary, `[cached] ${body.summary}`);
    assert.deepEqual(again.body.created, []);
    assert.equal(loreTitled(h, "Tidewater Company").length, 1);
    assertNoSecrets(h, JSON.stringify([body, again.body]));
  }, { noCoreCredentials: true, parserSession: false, env: { ZERO_LOGIN: "true" } }));

Deno.test("brain dump: review proposes (sanitized), inbox only acknowledges; nothing written", () =>
  withBrainDump(async (h) => {
    const review = await h.requestJson("/api/brain-dump", post({ rawText: TEXT, mode: "review" }));
    assert.equal(review.status, 200);
    assert.equal(review.body.mode, "review");
    const proposals = review.body.proposedEntities as Record<string, string>[];
    assert.equal(proposals.length, 5);
    const harbor = proposals.find((p) => p.title === "Saltmarrow Harbor")!;
    assert.equal(harbor.action, "update");
    assert.equal(harbor.existingNoteId, W.locHarbor);
    assert.deepEqual(review.body.duplicates, []);
    const watch = await h.requestJson(
      "/api/brain-dump",
      post({ rawText: "Saltmarrow Harbor Watch patrols the docks at night.", mode: "review" }),
    );
    assert.deepEqual(watch.body.duplicates, [{
      proposedTitle: "Saltmarrow Harbor Watch",
      proposedType: "location",
      matches: [{ noteId: W.locHarbor, title: "Saltmarrow Harbor", score: 0.9 }],
    }]);
    const inbox = await h.requestJson("/api/brain-dump", post({ rawText: TEXT, mode: "inbox" }));
    assert.deepEqual(inbox.body, { mode: "inbox", queued: true });
    assert.equal(h.core.requests.filter((r) => r.method !== "GET").length, 0);
    assert.deepEqual(
      h.parser!.requests.filter((r) => r.path === "/brain-dump").map((r) =>
        JSON.parse(r.bodyText!)
      ),
      [
        { rawText: TEXT, mode: "review" },
        { rawText: "Saltmarrow Harbor Watch patrols the docks at night.", mode: "review" },
        { rawText: TEXT, mode: "inbox" },
      ],
    );

    // HTML in an answer is sanitized before it reaches the browser
    h.parser!.fault({
      path: "/brain-dump",
      status: 200,
      times: 1,
      body: JSON.stringify({
        mode: "review",
        summary: "s",
        proposedEntities: [{
          title: "Evil",
          type: "character",
          action: "create",
          content: '<p onclick="steal()">Hi<script>alert(1)</script></p>',
          attributes: { aliases: ["E", "V"], age: 3, empty: "" },
          tags: ["villain"],
        }],
      }),
    });
    const crafted = await h.requestJson("/api/brain-dump", post({ rawText: TEXT, mode: "review" }));
    assert.deepEqual(crafted.body.proposedEntities, [{
      title: "Evil",
      type: "character",
      action: "create",
      content: "<p>Hi</p>",
      attributes: { aliases: "E, V", age: "3" },
      tags: ["villain"],
    }]);
    assert.deepEqual(crafted.body.duplicates, []);

    // an answer of the wrong shape is a 502, never passed on; auto reads the stream's `done`
    h.parser!.fault({ path: "/brain-dump", status: 200, times: 1, body: '{"summary":1}' });
    const odd = await h.requestJson("/api/brain-dump", post({ rawText: TEXT, mode: "review" }));
    assert.equal(odd.status, 502);
    assert.equal(odd.body.error, "UPSTREAM_ERROR");
    for (
      const events of [
        'event: done\ndata: {"type":"done","raw":"{\\"summary\\":1}"}\n\n',
        'event: done\ndata: {"type":"done","raw":"not json"}\n\n',
        'event: status\ndata: {"type":"status","stage":"llm"}\n\n', // ends without done
      ]
    ) {
      h.parser!.fault({
        path: "/brain-dump/stream",
        status: 200,
        times: 1,
        contentType: "text/event-stream",
        body: events,
      });
      const auto = await h.requestJson("/api/brain-dump", post({ rawText: TEXT }));
      assert.equal(auto.status, 502, events);
      assert.equal(auto.body.error, "UPSTREAM_ERROR");
    }
  }));

Deno.test("brain dump: bad input is a 400 and never reaches the Parser", () =>
  withBrainDump(async (h) => {
    const bad: [string, unknown][] = [
      ["/api/brain-dump", { rawText: "too short" }],
      ["/api/brain-dump", { rawText: "x".repeat(50_001) }],
      ["/api/brain-dump", { rawText: TEXT, mode: "later" }],
      ["/api/brain-dump", { rawText: TEXT, model: "" }],
      ["/api/brain-dump", { rawText: TEXT, extra: 1 }],
      ["/api/brain-dump/stream", { rawText: "short" }],
      ["/api/brain-dump/stream", { rawText: TEXT, autoRelate: "yes" }],
      ["/api/brain-dump/stream", { rawText: TEXT, mode: "review" }],
      ["/api/brain-dump/commit", { rawText: TEXT, approvedEntities: [] }],
      ["/api/brain-dump/commit", {
        rawText: TEXT,
        approvedEntities: [{ title: "Mira Tallowend", type: "character", action: "update" }],
      }],
      ["/api/brain-dump/commit", {
        rawText: TEXT,
        approvedEntities: [{ title: "A", type: "two words", action: "create" }],
      }],
      ["/api/brain-dump/commit", {
        rawText: TEXT,
        approvedEntities: [{
          title: "A",
          type: "character",
          action: "update",
          existingNoteId: "../notes/x",
        }],
      }],
      ["/api/brain-dump/commit", {
        rawText: TEXT,
        approvedEntities: Array.from(
          { length: MAX_COMMIT_ENTITIES + 1 },
          (_, i) => ({ title: `N${i}`, type: "character", action: "create" }),
        ),
      }],
      ["/api/brain-dump/batch", { items: [] }],
      ["/api/brain-dump/batch", {
        items: Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => ({ rawText: TEXT })),
      }],
      ["/api/brain-dump/batch", { items: [{ rawText: TEXT, mode: "inbox" }] }],
      ["/api/brain-dump/batch", { items: [{ rawText: TEXT, parentNoteId: "a/b" }] }],
    ];
    for (const [path, json] of bad) {
      const res = await h.requestJson(path, post(json));
      assert.equal(res.status, 400, `${path} ${JSON.stringify(json).slice(0, 120)}`);
      assert.equal(res.body.error, "INVALID_REQUEST");
    }
    const update = await h.requestJson(
      "/api/brain-dump/commit",
      post(bad[9][1]),
    );
    assert.deepEqual(
      (update.body.details as { fields: { path: string }[] }).fields.map((f) => f.path),
      ["body.approvedEntities.0.existingNoteId"],
    );
    // Parser ids that could steer the upstream path or query, and history limits out of range
    const traversal = ["..", ".", "%2e%2e", "a%2Fb", "a%5Cb", "a%00b", "a%0Ab", "a%20b", "a%3Fb"];
    for (
      const path of [
        ...traversal.map((id) => `/api/brain-dump/history?cursor=${id}`),
        ...traversal.slice(3).flatMap((id) => [
          `/api/brain-dump/history/${id}`,
          `/api/brain-dump/${id}/diffs`,
          `/api/brain-dump/batch/${id}`,
        ]),
        `/api/brain-dump/history/${"c".repeat(129)}`,
        ...["0", "101", "2.5", "two", ""].map((n) => `/api/brain-dump/history?limit=${n}`),
      ]
    ) {
      const res = await h.requestJson(path);
      assert.equal(res.status, 400, path);
      assert.equal(res.body.error, "INVALID_REQUEST");
    }
    const del = await h.requestJson("/api/brain-dump/batch/a%2F..", { method: "DELETE" });
    assert.equal(del.status, 400);
    // dot segments in the path itself are refused before routing (fetch would resolve them)
    for (const target of ["/api/brain-dump/history/%2e%2e", "/api/brain-dump/%2E./diffs"]) {
      const raw = await rawExchange(
        h.url,
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      );
      assert.equal(raw.status, 400, target);
    }
    assert.deepEqual(parserCalls(h), []);
    assert.equal((await h.request("/api/brain-dump/stream")).status, 405);
  }));

Deno.test("brain dump: INVALID_MODEL and a missing Core integration are our JSON errors", () =>
  withBrainDump(async (h) => {
    for (const path of ["/api/brain-dump", "/api/brain-dump/stream"]) {
      const res = await h.requestJson(path, post({ rawText: TEXT, model: "other/model" }));
      assert.equal(res.status, 400, path);
      assert.equal(res.body.error, "UPSTREAM_REJECTED");
      assert.equal((res.body.details as { upstreamCode: string }).upstreamCode, "INVALID_MODEL");
      assert.doesNotMatch(JSON.stringify(res.body), /deepseek/); // the Parser's words stay there
    }
    const owner = h.parser!.store.ownerUserId()!;
    h.parser!.store.deleteIntegration(owner);
    for (const path of ["/api/brain-dump", "/api/brain-dump/stream"]) {
      const res = await h.requestJson(path, post({ rawText: TEXT }));
      assert.equal(res.status, 503, path);
      assert.equal(res.body.error, "NOT_CONFIGURED");
      assert.equal((res.body.details as { service: string }).service, "core");
    }
  }));

Deno.test("brain dump: the Parser's brain-dump rate limit is a 429 with Retry-After", () =>
  withBrainDump(async (h) => {
    assert.equal((await h.requestJson("/api/brain-dump/history")).status, 200);
    for (
      const [path, init] of [
        ["/api/brain-dump", post({ rawText: TEXT, mode: "inbox" })],
        ["/api/brain-dump/stream", post({ rawText: TEXT })],
      ] as const
    ) {
      const res = await h.requestJson(path, init);
      assert.equal(res.status, 429, path);
      assert.equal(res.body.error, "RATE_LIMITED");
      assert.equal((res.body.details as { upstreamCode: string }).upstreamCode, "RATE_LIMITED");
      assert.equal(res.headers.get("retry-after"), "60");
      assert.doesNotMatch(JSON.stringify(res.body), /10 requests per minute/);
    }
  }, { max: 1 }));

Deno.test("brain dump: what auto, stream and commit write is in the caller's index when they end", () =>
  withBrainDump(async (h) => {
    /** The notes the service asked the Parser to index, in order. */
    const reindexed = () =>
      h.parser!.requests.filter((r) => r.method === "POST" && r.path.startsWith("/rag/reindex/"))
        .map((r) => decodeURIComponent(r.path.slice("/rag/reindex/".length)));
    const found = async (text: string) => {
      const r = await h.requestJson<Json>("/api/rag", post({ text, topK: 50 }));
      return r.body.results.map((x: { noteId: string }) => x.noteId);
    };
    // auto: every created and updated note, before the answer
    const auto = await h.requestJson<Json>("/api/brain-dump", post({ rawText: TEXT }));
    const autoIds = [...auto.body.created, ...auto.body.updated].map((n: Json) => n.noteId);
    assert.deepEqual(reindexed().sort(), autoIds.sort());
    const company = auto.body.created.find((n: Json) => n.title === "Tidewater Company").noteId;
    assert.ok((await found("Tidewater Company fortune")).includes(company));
    // a cache hit wrote nothing: nothing more is indexed
    h.parser!.clearRequests();
    const cached = await h.requestJson<Json>("/api/brain-dump", post({ rawText: TEXT }));
    assert.equal(cached.body.cached, true);
    assert.deepEqual(reindexed(), []);

    // the stream: indexed after `done`, before the stream ends
    const streamed = await h.request(
      "/api/brain-dump/stream",
      post({ rawText: "Wren Ashdown guards the Saltglass Vault." }),
    );
    const done = events(await streamed.text()).find((e) => e.event === "done")!;
    const written = JSON.parse(done.data.raw as string);
    const vault = written.created.find((n: Json) => n.title === "Saltglass Vault").noteId;
    assert.ok(reindexed().includes(vault));
    assert.ok((await found("Saltglass Vault")).includes(vault));

    // commit; a note the Parser cannot index is logged, the commit still answers
    h.parser!.clearRequests();
    h.parser!.fault({ method: "POST", path: /^\/rag\/reindex\//, status: 500, times: 1 });
    const commit = await h.requestJson<Json>(
      "/api/brain-dump/commit",
      post({
        rawText: "reviewed",
        approvedEntities: [
          { title: "Ila Thorn", type: "character", action: "create", content: "<p>A diver.</p>" },
          { title: "Coral Court", type: "location", action: "create", content: "<p>Reef.</p>" },
        ],
      }),
    );
    assert.equal(commit.status, 200);
    assert.equal(reindexed().length, 2);
    assert.ok(h.logs.some((l) => l.includes("note not added to the semantic index")));
    assertNoSecrets(h, h.logs.join("\n"));
  }));

Deno.test("brain dump commit: sanitized content forwarded, outcomes mapped, history model", () =>
  withBrainDump(async (h) => {
    const res = await h.requestJson(
      "/api/brain-dump/commit",
      post({
        rawText: "reviewed",
        approvedEntities: [
          {
            title: " Ila Thorn ",
            type: "character",
            action: "create",
            content: '<p>A diver.<img src="https://tracker.example/x.png"><script>x()</script></p>',
            existingNoteId: W.charOskar, // ignored for a create
            attributes: { age: "30" }, // dropped, as the Parser does
          },
          { title: "Oskar Venn", type: "character", action: "create" },
          {
            title: "Ghost",
            type: "character",
            action: "update",
            existingNoteId: "missingNote1",
            content: "<p>x</p>",
          },
        ],
      }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const sent = JSON.parse(
      h.parser!.requests.find((r) => r.path === "/brain-dump/commit")!.bodyText!,
    );
    assert.deepEqual(sent.approvedEntities[0], {
      title: "Ila Thorn",
      type: "character",
      action: "create",
      content: "<p>A diver.</p>",
    });
    assert.equal(sent.approvedEntities[2].existingNoteId, "missingNote1");
    const [ila] = loreTitled(h, "Ila Thorn");
    assert.equal(h.core.store.getContent(ila.noteId), "<p>A diver.</p>");
    assert.deepEqual(res.body.skipped, [
      { title: "Oskar Venn", reason: 'Possible duplicate of "Oskar Venn" (95% match)' },
      { title: "Ghost", reason: "Could not be written to Core" },
    ]);
    assert.equal(res.body.summary, "Committed from review");
    assert.ok(Array.isArray(res.body.duplicates) && Array.isArray(res.body.relations));
    assertNoSecrets(h, JSON.stringify(res.body));
    const history = await h.requestJson<Record<string, unknown>[]>("/api/brain-dump/history");
    assert.equal(history.body[0].model, "review-commit");
  }));

Deno.test("brain dump history: 20 or `limit` a page, uuid cursors, detail, diffs, 404", () =>
  withBrainDump(async (h) => {
    for (let i = 0; i < 21; i++) {
      const r = await h.requestJson(
        "/api/brain-dump/commit",
        post({
          rawText: `entry ${i}`,
          approvedEntities: [{ title: `Keeper ${i}`, type: "character", action: "create" }],
        }),
      );
      assert.equal(r.status, 200);
    }
    h.parser!.clearRequests();
    // a bare array; the next page's cursor is a header while more follow
    type Item = { id: string; rawText: string; createdAt: string; timestamp: string };
    const page = async (query = "") => {
      const r = await h.requestJson<Item[]>(`/api/brain-dump/history${query}`);
      assert.equal(r.status, 200);
      return { items: r.body, next: r.headers.get("x-next-cursor") };
    };
    const first = await page();
    assert.equal(first.items.length, 20);
    assert.equal(first.items[0].rawText, "entry 20");
    assert.deepEqual(first.items[0], {
      ...first.items[0],
      notesUpdated: [],
      entityCount: 1,
      timestamp: first.items[0].createdAt,
    });
    for (const item of first.items) assert.match(item.id, UUID);
    assert.equal(first.next, first.items[19].id);
    const next = await page(`?cursor=${first.next}`);
    assert.deepEqual(next.items.map((i) => i.rawText), ["entry 0"]);
    assert.equal(next.next, null, "no header on the last page");
    assert.deepEqual(parserCalls(h), [
      "GET /brain-dump/history?limit=20",
      `GET /brain-dump/history?limit=20&cursor=${first.next}`,
    ]);

    // `limit` is honoured (the Parser's own bounds, 1-100) and paging keeps it
    h.parser!.clearRequests();
    const two = await page("?limit=2");
    assert.deepEqual(two.items.map((i) => i.rawText), ["entry 20", "entry 19"]);
    const after = await page(`?limit=2&cursor=${two.next}`);
    assert.deepEqual(after.items.map((i) => i.rawText), ["entry 18", "entry 17"]);
    const all = await page("?limit=100");
    assert.deepEqual([all.items.length, all.next], [21, null]);
    assert.deepEqual(parserCalls(h), [
      "GET /brain-dump/history?limit=2",
      `GET /brain-dump/history?limit=2&cursor=${two.next}`,
      "GET /brain-dump/history?limit=100",
    ]);

    // an auto run that updates an existing note: detail and diffs
    const run = await h.requestJson(
      "/api/brain-dump",
      post({ rawText: "Mira Tallowend now ferries pilgrims to Greyfin Lighthouse." }),
    );
    assert.equal(run.status, 200);
    const [latest] = (await h.requestJson<{ id: string }[]>("/api/brain-dump/history")).body;
    assert.match(latest.id, UUID);
    const detail = await h.requestJson<Json>(
      `/api/brain-dump/history/${latest.id}`,
    );
    assert.equal(detail.status, 200);
    assert.equal(detail.body.summary, detail.body.parsedJson.summary);
    assert.deepEqual(detail.body.notesUpdated.sort(), [W.charMira, W.locLighthouse].sort());
    const revisions = detail.body.parsedJson.revisions as Record<string, string>[];
    const mira = revisions.find((r) => r.noteId === W.charMira)!;
    assert.match(mira.contentAfter, /now ferries pilgrims/);
    // Core's stored HTML is sanitized on the way out (the portrait becomes our image route)
    assert.match(mira.contentBefore, new RegExp(`src="/api/images/${W.imgPortrait}/`));
    const diffs = await h.requestJson<{ diffs: Record<string, string | null>[] }>(
      `/api/brain-dump/${latest.id}/diffs`,
    );
    assert.equal(diffs.status, 200);
    const miraDiff = diffs.body.diffs.find((d) => d.noteId === W.charMira)!;
    assert.equal(miraDiff.action, "updated");
    assert.equal(miraDiff.contentBefore, mira.contentBefore);
    assert.equal(miraDiff.contentAfter, mira.contentAfter);
    assert.ok(miraDiff.revisionIdBefore && miraDiff.revisionIdAfter);

    const unknown = crypto.randomUUID();
    for (
      const path of [
        `/api/brain-dump/history/${unknown}`,
        `/api/brain-dump/${unknown}/diffs`,
        "/api/brain-dump/history/a.b", // no shape is imposed on the Parser's ids
      ]
    ) {
      const missing = await h.requestJson(path);
      assert.equal(missing.status, 404, path);
      assert.equal(missing.body.error, "NOT_FOUND");
      assert.equal(
        (missing.body.details as { upstreamCode: string }).upstreamCode,
        "ENTRY_NOT_FOUND",
      );
    }
    // literal "history" wins over an entry id: this is the detail of an entry called "diffs"
    assert.equal((await h.requestJson("/api/brain-dump/history/diffs")).status, 404);
    assert.ok(parserCalls(h).includes("GET /brain-dump/history/diffs"));
    // and the batch row wins over `/:id/diffs`: this is the status of a batch called "diffs"
    const batch = await h.requestJson("/api/brain-dump/batch/diffs");
    assert.equal((batch.body.details as { upstreamCode: string }).upstreamCode, "BATCH_NOT_FOUND");
  }));

Deno.test("brain dump batch: submit, progress to done, counts, cancel, job errors", () =>
  withBrainDump(async (h, opts) => {
    const until = async (batchId: string) => {
      let last: { status: number; body: Json } | undefined;
      await eventually(`batch ${batchId} finishes`, async () => {
        last = await h.requestJson<Json>(`/api/brain-dump/batch/${batchId}`);
        return last.body.terminal === true;
      });
      return last!;
    };
    opts.batchPollMs = 10;
    const sub = await h.requestJson<{ batchId: string; jobs: unknown[] }>(
      "/api/brain-dump/batch",
      post({
        items: [{ rawText: "Nell Farrow keeps the Drift Lamp." }, {
          rawText: SHORT,
          mode: "review",
        }],
      }),
    );
    assert.equal(sub.status, 200);
    assert.match(sub.body.batchId, /^batch_\d+_[0-9a-f]{8}$/);
    assert.equal(sub.body.jobs.length, 2);
    const done = await until(sub.body.batchId);
    assert.deepEqual(done.body.counts, { queued: 0, running: 0, done: 2, failed: 0, cancelled: 0 });
    assert.equal("userId" in done.body.jobs[0], false);
    assert.deepEqual(done.body.jobs.map((j: { mode: string }) => j.mode), ["auto", "review"]);
    assert.equal(loreTitled(h, "Nell Farrow").length, 1);

    // a failed job says why without the Parser's own words
    const owner = h.parser!.store.ownerUserId()!;
    const integration = h.parser!.store.getIntegration(owner)!;
    h.parser!.store.deleteIntegration(owner);
    const failing = await h.requestJson<{ batchId: string }>(
      "/api/brain-dump/batch",
      post({ items: [{ rawText: "Quen Sallow rows home." }] }),
    );
    const failed = await until(failing.body.batchId);
    assert.equal(failed.body.jobs[0].status, "failed");
    assert.equal(failed.body.jobs[0].error, "Core is not connected for this Parser account");
    h.parser!.store.setIntegration(owner, integration.baseUrl, integration.token);
    opts.llmFailure = "timeout";
    const slow = await h.requestJson<{ batchId: string }>(
      "/api/brain-dump/batch",
      post({ items: [{ rawText: "Quen Sallow rows home.", mode: "review" }] }),
    );
    const timedOut = await until(slow.body.batchId);
    assert.equal(timedOut.body.jobs[0].error, "The brain dump failed in the Parser");
    opts.llmFailure = undefined;

    await new Promise((res) => setTimeout(res, 50)); // the idle worker stops
    opts.batchPollMs = 60_000;
    const queued = await h.requestJson<{ batchId: string }>(
      "/api/brain-dump/batch",
      post({ items: [{ rawText: "Rook Tamsin sails." }, { rawText: "Sela Brin sails." }] }),
    );
    const cancel = await h.requestJson(`/api/brain-dump/batch/${queued.body.batchId}`, {
      method: "DELETE",
    });
    assert.deepEqual(cancel.body, { cancelled: 2 });
    const after = await h.requestJson<Json>(
      `/api/brain-dump/batch/${queued.body.batchId}`,
    );
    assert.equal(after.body.counts.cancelled, 2);
    assert.equal(after.body.terminal, true);
    const unknown = "batch_1767225600000_0a1b2c3d";
    const none = await h.requestJson(`/api/brain-dump/batch/${unknown}`, { method: "DELETE" });
    assert.deepEqual([none.status, none.body], [200, { cancelled: 0 }]);
    const missing = await h.requestJson(`/api/brain-dump/batch/${unknown}`);
    assert.equal(missing.status, 404);
    assert.equal(
      (missing.body.details as { upstreamCode: string }).upstreamCode,
      "BATCH_NOT_FOUND",
    );
  }));

// ---------------------------------------------------------------------------------------------
// The stream
// ---------------------------------------------------------------------------------------------

/** Reads a stream response whole, adding each event's name to `arrived` as it arrives. */
async function readEvents(res: Response, arrived: string[]): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    arrived.splice(0, arrived.length, ...events(text).map((e) => e.event));
  }
  return text;
}

Deno.test("brain dump stream: headers, events in order, delivered as the Parser sends them", () => {
  const time = manualDeadlines();
  return withBrainDump(async (h, opts) => {
    const emitted: string[] = [];
    opts.paceMs = 60;
    opts.onStreamEvent = (event) => emitted.push(event);
    const res = await h.request("/api/brain-dump/stream", post({ rawText: SHORT }));
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
    assert.equal(res.headers.get("x-accel-buffering"), "no");
    assert.match(res.headers.get("cache-control")!, /no-cache/);
    const arrived: string[] = [];
    let ended = false;
    const reading = readEvents(res, arrived).finally(() => ended = true);
    // The double sends one event each time its pace passes on the test's clock. Whenever it
    // waits, every event it sent has reached the client: nothing is held back for later ones.
    for (;;) {
      await eventually("the double paces its next event", () => ended || time.pendingOf(60) === 1);
      if (ended) break;
      await eventually(
        `event ${emitted.length} reaches the client before the next is sent`,
        () => arrived.length === emitted.length,
      );
      time.advance(60);
    }
    const evs = events(await reading);
    assert.deepEqual(evs.map((e) => e.event), emitted);
    assert.ok(emitted.length > 5, `the paced run sent ${emitted.length} events`);
    assert.equal(evs[0].data.stage, "preflight");
    assert.equal(evs.at(-1)!.event, "done");
    const raw = JSON.parse(evs.at(-1)!.data.raw as string);
    assert.deepEqual(raw.created.map((n: { title: string }) => n.title), ["Ada Quill", "Bo Reed"]);
  }, { deadlines: time });
});

Deno.test("brain dump stream: the client's abort cancels the Parser's stream", () => {
  const time = manualDeadlines();
  return withBrainDump(async (h, opts) => {
    let aborted = 0;
    opts.paceMs = 100;
    opts.onStreamAbort = () => aborted++;
    const ac = new AbortController();
    const res = await h.request("/api/brain-dump/stream", {
      ...post({ rawText: TEXT }),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    await eventually("the double paces its first event", () => time.pendingOf(100) === 1);
    time.advance(100); // one event, then the double waits for its next pace, which never passes
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^event: status\n/);
    ac.abort();
    await reader.cancel().catch(() => {});
    await eventually("the Parser saw its client go away", () => aborted > 0);
    assert.equal(aborted, 1);
    // the abort ended the run before anything was written
    assert.equal(loreTitled(h, "Tidewater Company").length, 0);
    await eventually(
      "the stream's end is logged",
      () => h.logs.some((l) => l.includes('"stream end"')),
    );
    const end = h.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "stream end");
    assert.equal(end?.reason, "client-closed");
  }, { deadlines: time });
});

Deno.test("brain dump stream: a stalled Parser ends with our terminal error event", () => {
  const time = manualDeadlines();
  return withBrainDump(async (h, opts) => {
    let aborted = 0;
    opts.stallAfterEvents = 2;
    opts.onStreamAbort = () => aborted++;
    const res = await h.request("/api/brain-dump/stream", post({ rawText: TEXT }));
    assert.equal(res.status, 200);
    const arrived: string[] = [];
    const reading = readEvents(res, arrived);
    await eventually(
      "two events, then the stream waits for more",
      () => arrived.length === 2 && time.pendingOf(300) === 1,
    );
    time.advance(300); // the double stalls: the stream's idle deadline passes
    const evs = events(await reading);
    assert.deepEqual(evs.map((e) => e.event), ["status", "status", "error"]);
    assert.equal(evs[2].data.error, "UPSTREAM_TIMEOUT");
    assert.equal(typeof evs[2].data.requestId, "string");
    assert.equal(evs[2].data.requestId, res.headers.get("x-request-id"));
    await eventually("the stalled upstream request was cancelled", () => aborted > 0);
    assert.equal(aborted, 1);
  }, { env: { STREAM_IDLE_TIMEOUT_MS: "300" }, deadlines: time });
});

Deno.test("brain dump stream: both Parser error shapes and keepalives pass through unchanged", () =>
  withBrainDump(async (h, opts) => {
    const direct = async () => {
      const res = await fetch(`${h.parser!.url}/brain-dump/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.parserToken}`, "content-type": "application/json" },
        body: JSON.stringify({ rawText: SHORT }),
      });
      return await res.text();
    };
    const cases = [
      [
        "timeout",
        'event: error\ndata: {"type":"error","error":"Stream stalled (no data for 15000ms)","code":"TIMEOUT"}\n\n',
      ],
      [
        "invalid-json",
        'event: error\ndata: {"type":"error","code":"BRAIN_DUMP_FAILED","message":"Unable to complete brain dump."}\n\n',
      ],
    ] as const;
    for (const [failure, last] of cases) {
      opts.llmFailure = failure;
      const res = await h.request("/api/brain-dump/stream", post({ rawText: SHORT }));
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.ok(text.endsWith(last), text.slice(-300));
      assert.equal(text, await direct(), `${failure}: byte for byte what the Parser sent`);
    }
    opts.llmFailure = undefined;

    opts.keepaliveMs = 25;
    opts.paceMs = 40;
    const kept = await (await h.request("/api/brain-dump/stream", post({ rawText: SHORT }))).text();
    assert.match(kept, /\n\n: keepalive\n\n/);
    assert.equal(events(kept).at(-1)!.event, "done");
  }));

Deno.test("stream rewrite: only the named event changes, whatever the chunk boundaries", async () => {
  const enc = new TextEncoder();
  /** The upstream as chunks of `size` bytes (1: every byte alone, multi-byte characters split). */
  const chunked = (text: string, size: number) => {
    const bytes = enc.encode(text);
    return new Response(
      new ReadableStream({
        start(c) {
          for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
          c.close();
        },
      }),
    );
  };
  const rewrite = {
    done: (data: unknown) => {
      const d = data as { raw: string };
      return Promise.resolve(d.raw === "keep" ? undefined : { ...d, raw: d.raw.toUpperCase() });
    },
  };
  const other = 'event: status\ndata: {"stage":"llm","message":"Salt & Smoke — é"}\n\n' +
    ": keepalive\n\n" + 'event: token\r\ndata: {"content":"event: done"}\r\n\r\n';
  const cases: [upstream: string, expected: string][] = [
    [
      `${other}event: done\ndata: {"type":"done","raw":"x &amp; y"}\n\n`,
      `${other}event: done\ndata: {"type":"done","raw":"X &AMP; Y"}\n\n`,
    ],
    [`${other}event: done\ndata: {"raw":"keep"}\n\n`, ""], // unchanged: passed on as sent
    [`${other}event: done\ndata: not json\n\n`, ""],
    [`${other}event: done\ndata: {"raw":"cut`, ""], // the stream ends inside the event
  ];
  for (const [upstream, expected] of cases) {
    for (const size of [1, 2, 7, upstream.length]) {
      const out = await rewriteSseEvents(chunked(upstream, size), rewrite).text();
      assert.equal(out, expected || upstream, `${JSON.stringify(upstream.slice(-40))} by ${size}`);
    }
  }
});
