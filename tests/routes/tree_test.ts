/** Tree routes (move, backlinks, breadcrumbs) over HTTP through the real app against the double. */
import assert from "node:assert/strict";
import { type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";

const bare = { core: { world: false } };

interface MoveAnswer {
  noteId: string;
  parentNoteId: string;
  branchId: string;
  notePosition: number;
  index: number;
  removedBranchId: string | null;
}
interface ErrorBody {
  error: string;
  message: string;
  details?: Record<string, unknown> & { fields?: { path: string; message: string }[] };
}

/** A note created straight in the double's store (setup, not under test). */
function note(
  h: Harness,
  title: string,
  parentNoteId = "root",
  extra: { notePosition?: number; prefix?: string } = {},
): string {
  return h.core.store.createNote({ parentNoteId, title, type: "text", content: "", ...extra })
    .note.noteId;
}

const titlesUnder = (h: Harness, parent: string) =>
  h.core.store.childBranchesOf(parent).map((b) => h.core.store.getNote(b.noteId)?.title);

const parentsOf = (h: Harness, id: string) =>
  h.core.store.branchesOf(id).map((b) => b.parentNoteId).sort();

const move = (h: Harness, json: unknown) =>
  h.requestJson<MoveAnswer & ErrorBody>("/api/lore/move", { method: "POST", json });

const writes = (h: Harness) => upstreamCalls(h).filter((c) => !c.startsWith("GET "));

/** Parent A with three children, parent B with two, the moved note N second under A. */
function family(h: Harness) {
  const a = note(h, "Region A");
  const b = note(h, "Region B");
  const a1 = note(h, "A one", a, { notePosition: 10 });
  const n = note(h, "Wanderer", a, { notePosition: 20, prefix: "Old" });
  const a2 = note(h, "A two", a, { notePosition: 30 });
  const b1 = note(h, "B one", b, { notePosition: 10 });
  const b2 = note(h, "B two", b, { notePosition: 20 });
  return { a, b, a1, n, a2, b1, b2 };
}

Deno.test("move: to another parent at an index; new branch first, old one removed last", () =>
  withHarness(async (h) => {
    const { a, b, n } = family(h);
    h.core.clearRequests();
    const r = await move(h, { noteId: n, newParentId: b, index: 1 });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      noteId: n,
      parentNoteId: b,
      branchId: `${b}_${n}`,
      notePosition: 15,
      index: 1,
      removedBranchId: `${a}_${n}`,
    });
    assert.deepEqual(titlesUnder(h, b), ["B one", "Wanderer", "B two"]);
    assert.deepEqual(titlesUnder(h, a), ["A one", "A two"]);
    assert.deepEqual(parentsOf(h, n), [b]);
    assert.equal(h.core.store.getBranch(`${b}_${n}`)?.prefix, "Old", "the prefix moves along");
    assert.deepEqual(writes(h), ["POST /etapi/branches", `DELETE /etapi/branches/${a}_${n}`]);
    const cycleSearch = upstreamCalls(h).filter((c) => c.startsWith("GET /etapi/notes?"));
    assert.deepEqual(cycleSearch, [
      `GET /etapi/notes?search=note.noteId+%21%3D+%27%27&ancestorNoteId=${n}&includeArchivedNotes=true`,
    ]);
  }));

Deno.test("move: index beyond the end is clamped; index 0 goes before the first child", () =>
  withHarness(async (h) => {
    const { b, n, a1 } = family(h);
    const r = await move(h, { noteId: n, newParentId: b, index: 99 });
    assert.deepEqual([r.body.index, r.body.notePosition], [2, 30]);
    assert.deepEqual(titlesUnder(h, b), ["B one", "B two", "Wanderer"]);
    const first = await move(h, { noteId: a1, newParentId: b, index: 0 });
    assert.deepEqual([first.body.index, first.body.notePosition], [0, 0]);
    assert.deepEqual(titlesUnder(h, b), ["A one", "B one", "B two", "Wanderer"]);
  }));

Deno.test("move: same parent is a reorder — one PATCH, nothing created or deleted", () =>
  withHarness(async (h) => {
    const { a, n } = family(h);
    h.core.clearRequests();
    const r = await move(h, { noteId: n, newParentId: a, index: 0 });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      noteId: n,
      parentNoteId: a,
      branchId: `${a}_${n}`,
      notePosition: 0,
      index: 0,
      removedBranchId: null,
    });
    assert.deepEqual(titlesUnder(h, a), ["Wanderer", "A one", "A two"]);
    assert.deepEqual(writes(h), [`PATCH /etapi/branches/${a}_${n}`]);
    assert.ok(!upstreamCalls(h).some((c) => c.includes("search=")), "no cycle search needed");

    // already in place: nothing is written at all
    h.core.clearRequests();
    const still = await move(h, { noteId: n, newParentId: a, index: 0, oldParentId: a });
    assert.equal(still.status, 200);
    assert.deepEqual(writes(h), []);
  }));

Deno.test("move: no integer gap → siblings renumbered 10, 20, … before the note is placed", () =>
  withHarness(async (h) => {
    const { n } = family(h);
    const c = note(h, "Crowded");
    const c1 = note(h, "C one", c, { notePosition: 10 });
    const c2 = note(h, "C two", c, { notePosition: 11 });
    const c3 = note(h, "C three", c, { notePosition: 12 });
    h.core.clearRequests();
    const r = await move(h, { noteId: n, newParentId: c, index: 1 });
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.index, r.body.notePosition], [1, 20]);
    assert.deepEqual(titlesUnder(h, c), ["C one", "Wanderer", "C two", "C three"]);
    const pos = (id: string) => h.core.store.getBranch(`${c}_${id}`)?.notePosition;
    assert.deepEqual([pos(c1), pos(n), pos(c2), pos(c3)], [10, 20, 30, 40]);
    const w = writes(h);
    assert.deepEqual(
      w.slice(0, 2).sort(),
      [
        `PATCH /etapi/branches/${c}_${c2}`,
        `PATCH /etapi/branches/${c}_${c3}`,
      ].sort(),
    );
    assert.equal(w[2], "POST /etapi/branches");
  }));

Deno.test("move: a failing renumber is reverted; a failing create undoes the renumber", () =>
  withHarness(async (h) => {
    const { a, n } = family(h);
    const c = note(h, "Crowded");
    const kids = [1, 2, 3].map((i) => note(h, `C ${i}`, c, { notePosition: 10 }));
    const positions = () => kids.map((k) => h.core.store.getBranch(`${c}_${k}`)?.notePosition);

    h.core.fault({
      method: "PATCH",
      path: `/etapi/branches/${c}_${kids[2]}`,
      status: 500,
      times: 1,
    });
    const p = await move(h, { noteId: n, newParentId: c, index: 1 });
    assert.equal(p.status, 502);
    assert.equal(p.body.error, "UPSTREAM_ERROR");
    assert.match(p.body.message, /renumber the siblings under the new parent; nothing was changed/);
    assert.deepEqual(positions(), [10, 10, 10], "the PATCH that worked was reverted");

    h.core.fault({ method: "POST", path: "/etapi/branches", status: 500, times: 1 });
    const r = await move(h, { noteId: n, newParentId: c, index: 1 });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.match(r.body.message, /create the branch under the new parent; nothing was changed/);
    assert.deepEqual(r.body.details?.rolledBack, ["renumber the siblings under the new parent"]);
    assert.deepEqual(positions(), [10, 10, 10], "positions restored");
    assert.deepEqual(parentsOf(h, n), [a]);
  }));

Deno.test("move: the new branch failing leaves the note where it was", () =>
  withHarness(async (h) => {
    const { a, b, n } = family(h);
    h.core.fault({ method: "POST", path: "/etapi/branches", status: 500, times: 1 });
    const r = await move(h, { noteId: n, newParentId: b, index: 0 });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.equal(
      r.body.message,
      "Core failed to handle the request (while trying to create the branch under the new " +
        "parent; nothing was changed)",
    );
    assert.deepEqual(r.body.details, {
      service: "core",
      upstreamCode: "GENERIC",
      failedStep: "create the branch under the new parent",
      rolledBack: [],
    });
    assert.deepEqual(parentsOf(h, n), [a]);
  }));

Deno.test("move: the old branch's DELETE failing is rolled back; never orphaned", () =>
  withHarness(async (h) => {
    const { a, b, n } = family(h);
    h.core.fault({ method: "DELETE", path: `/etapi/branches/${a}_${n}`, status: 500, times: 1 });
    const r = await move(h, { noteId: n, newParentId: b, index: 0 });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.deepEqual(r.body.details, {
      service: "core",
      upstreamCode: "GENERIC",
      failedStep: "remove the branch under the old parent",
      rolledBack: ["create the branch under the new parent"],
    });
    assert.deepEqual(parentsOf(h, n), [a]);
    assert.deepEqual(titlesUnder(h, a), ["A one", "Wanderer", "A two"]);
  }));

Deno.test("move: when the rollback fails too → PARTIAL_FAILURE; the note keeps both parents", () =>
  withHarness(async (h) => {
    const { a, b, n } = family(h);
    h.core.fault({ method: "DELETE", path: /^\/etapi\/branches\//, status: 500, times: 2 });
    const r = await move(h, { noteId: n, newParentId: b, index: 0 });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "PARTIAL_FAILURE");
    assert.deepEqual(r.body.details, {
      failedStep: "remove the branch under the old parent",
      cause: "UPSTREAM_ERROR",
      completed: ["create the branch under the new parent"],
      rolledBack: [],
      leftBehind: ["create the branch under the new parent"],
    });
    assert.deepEqual(parentsOf(h, n), [a, b].sort());
  }));

Deno.test("move: a pre-existing clone under the new parent is reused, never deleted", () =>
  withHarness(async (h) => {
    const { a, b, n } = family(h);
    h.core.store.createBranch({ noteId: n, parentNoteId: b, notePosition: 5, prefix: "Clone" });
    h.core.clearRequests();
    const r = await move(h, { noteId: n, newParentId: b, index: 2 });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      noteId: n,
      parentNoteId: b,
      branchId: `${b}_${n}`,
      notePosition: 30,
      index: 2,
      removedBranchId: `${a}_${n}`,
    });
    assert.deepEqual(writes(h), [
      `PATCH /etapi/branches/${b}_${n}`,
      `DELETE /etapi/branches/${a}_${n}`,
    ]);
    assert.equal(h.core.store.getBranch(`${b}_${n}`)?.prefix, "Clone");
    assert.deepEqual(parentsOf(h, n), [b]);

    // failure on the old branch: the clone goes back to its place and stays
    const { a: a2, b: b2, n: n2 } = family(h);
    h.core.store.createBranch({ noteId: n2, parentNoteId: b2, notePosition: 5 });
    h.core.fault({ method: "DELETE", path: `/etapi/branches/${a2}_${n2}`, status: 500, times: 1 });
    const f = await move(h, { noteId: n2, newParentId: b2, index: 2, oldParentId: a2 });
    assert.equal(f.status, 502);
    assert.deepEqual(f.body.details?.rolledBack, ["reposition the note under the new parent"]);
    assert.equal(h.core.store.getBranch(`${b2}_${n2}`)?.notePosition, 5);
    assert.deepEqual(parentsOf(h, n2), [a2, b2].sort());
  }));

Deno.test("move: _share placements stay; a note only under _share just gains the parent", () =>
  withHarness(async (h) => {
    const { a, b, n } = family(h);
    h.core.store.createBranch({ noteId: n, parentNoteId: "_share" });
    const r = await move(h, { noteId: n, newParentId: b, index: 0 });
    assert.equal(r.body.removedBranchId, `${a}_${n}`);
    assert.deepEqual(parentsOf(h, n), ["_share", b].sort());

    const shared = note(h, "Broadsheet", "_share");
    const s = await move(h, { noteId: shared, newParentId: b, index: 0 });
    assert.equal(s.status, 200);
    assert.equal(s.body.removedBranchId, null);
    assert.deepEqual(parentsOf(h, shared), ["_share", b].sort());
  }));

Deno.test("move: explicit oldParentId picks the branch to remove; it must be a parent", () =>
  withHarness(async (h) => {
    const { a, b, n } = family(h);
    const c = note(h, "Region C");
    h.core.store.createBranch({ noteId: n, parentNoteId: c });
    const r = await move(h, { noteId: n, newParentId: b, index: 0, oldParentId: c });
    assert.equal(r.body.removedBranchId, `${c}_${n}`);
    assert.deepEqual(parentsOf(h, n), [a, b].sort());
    h.core.clearRequests();
    const bad = await move(h, { noteId: n, newParentId: c, index: 0, oldParentId: "root" });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.details?.fields, [
      { path: "body.oldParentId", message: "is not a parent of the note" },
    ]);
    assert.deepEqual(writes(h), []);
  }));

Deno.test("move: into itself or its own subtree is refused with one subtree search", () =>
  withHarness(async (h) => {
    const top = note(h, "Continent");
    const mid = note(h, "Kingdom", top);
    const leaf = note(h, "Village", mid);
    h.core.store.createAttribute({ noteId: leaf, type: "label", name: "archived" });
    h.core.clearRequests();
    for (const target of [mid, leaf]) {
      const r = await move(h, { noteId: top, newParentId: target, index: 0 });
      assert.equal(r.status, 400, target);
      assert.equal(r.body.error, "INVALID_REQUEST");
      assert.deepEqual(r.body.details?.fields, [
        { path: "body.newParentId", message: "is the note or one of its descendants" },
      ]);
    }
    assert.deepEqual(writes(h), []);
    assert.equal(
      upstreamCalls(h).filter((c) => c.startsWith("GET /etapi/notes?")).length,
      2,
      "one search per attempt",
    );
    h.core.clearRequests();
    const self = await move(h, { noteId: top, newParentId: top, index: 0 });
    assert.equal(self.status, 400);
    assert.deepEqual(upstreamCalls(h), []);
    assert.deepEqual(parentsOf(h, top), ["root"]);
  }));

Deno.test("move: missing note or parent → 404", () =>
  withHarness(async (h) => {
    const { b, n } = family(h);
    const r = await move(h, { noteId: "noSuchNote01", newParentId: b, index: 0 });
    assert.deepEqual([r.status, r.body.error, r.body.message], [
      404,
      "NOT_FOUND",
      "Note not found",
    ]);
    const p = await move(h, { noteId: n, newParentId: "noSuchNote02", index: 0 });
    assert.deepEqual([p.status, p.body.message], [404, "New parent note not found"]);
    const both = await move(h, { noteId: "noSuchNote01", newParentId: "noSuchNote02", index: 0 });
    assert.equal(both.body.message, "Note not found");
  }, bare));

Deno.test("move: bad bodies, injection forms and system notes are 400, nothing sent", () =>
  withHarness(async (h) => {
    const { b, n } = family(h);
    h.core.clearRequests();
    const bodies: unknown[] = [
      {},
      { noteId: n, newParentId: b },
      { noteId: n, newParentId: b, index: -1 },
      { noteId: n, newParentId: b, index: 1.5 },
      { noteId: n, newParentId: b, index: "1" },
      { noteId: n, newParentId: b, index: 0, extra: true },
      { noteId: "a/b", newParentId: b, index: 0 },
      { noteId: "../etapi/notes/x", newParentId: b, index: 0 },
      { noteId: n, newParentId: "%2F", index: 0 },
      { noteId: n, newParentId: b, index: 0, oldParentId: "x y" },
      { noteId: "root", newParentId: b, index: 0 },
      { noteId: "_share", newParentId: b, index: 0 },
      { noteId: n, newParentId: "_share", index: 0 },
      { noteId: n, newParentId: "_hidden", index: 0 },
      { noteId: n, newParentId: b, index: 0, oldParentId: "_share" },
    ];
    for (const body of bodies) {
      const r = await move(h, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
  }, bare));

interface Backlink {
  noteId: string;
  title: string;
  loreType: string | null;
  relations: string[];
  viaContentLink: boolean;
}

Deno.test("backlinks: relation and content-link sources, owned only, self excluded, by title", () =>
  withHarness(async (h) => {
    const s = h.core.store;
    const target = note(h, "Saltmarsh Quay");
    const rel = (from: string, name: string, to = target, isInheritable = false) =>
      s.createAttribute({ noteId: from, type: "relation", name, value: to, isInheritable });
    const ally = note(h, "Maren Vell");
    s.createAttribute({ noteId: ally, type: "label", name: "loreType", value: "character" });
    rel(ally, "relAlly");
    rel(ally, "relHome");
    rel(ally, "relAlly"); // duplicate names collapse
    const writer = note(h, "Harbor Chronicle");
    s.setNoteContent(writer, `<p>See <a class="reference-link" href="#root/${target}">it</a></p>`, {
      scanLinks: true,
    });
    const both = note(h, "Dockmaster Ledger");
    rel(both, "relEnemy");
    s.setNoteContent(both, `<p><a href="#root/${target}">quay</a></p>`, { scanLinks: true });
    const parent = note(h, "Coast Provinces");
    rel(parent, "relCapital", target, true);
    const child = note(h, "Inland Hamlet", parent); // shows the inherited relation: not a source
    const archived = note(h, "Old Harbor Map");
    rel(archived, "relDepicts");
    s.createAttribute({ noteId: archived, type: "label", name: "archived" });
    rel(target, "relSelf"); // the note itself
    const mention = note(h, "Idle Mention");
    s.createAttribute({ noteId: mention, type: "label", name: "seeAlso", value: target });
    note(h, "Unrelated");
    assert.ok(s.attributesOf(child).some((a) => a.name === "relCapital"));

    h.core.clearRequests();
    const r = await h.requestJson<Backlink[]>(`/api/lore/${target}/backlinks`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, [
      {
        noteId: parent,
        title: "Coast Provinces",
        loreType: null,
        relations: ["relCapital"],
        viaContentLink: false,
      },
      {
        noteId: both,
        title: "Dockmaster Ledger",
        loreType: null,
        relations: ["relEnemy"],
        viaContentLink: true,
      },
      {
        noteId: writer,
        title: "Harbor Chronicle",
        loreType: null,
        relations: [],
        viaContentLink: true,
      },
      {
        noteId: ally,
        title: "Maren Vell",
        loreType: "character",
        relations: ["relAlly", "relHome"],
        viaContentLink: false,
      },
      {
        noteId: archived,
        title: "Old Harbor Map",
        loreType: null,
        relations: ["relDepicts"],
        viaContentLink: false,
      },
    ]);
    assert.deepEqual(upstreamCalls(h).sort(), [
      `GET /etapi/notes/${target}`,
      `GET /etapi/notes?search=${target}&fastSearch=true&includeArchivedNotes=true`,
    ]);
  }, bare));

Deno.test("backlinks: none → empty list; missing note → 404; bad ids → 400 before Core", () =>
  withHarness(async (h) => {
    const lonely = note(h, "Lonely Rock");
    const r = await h.requestJson<Backlink[]>(`/api/lore/${lonely}/backlinks`);
    assert.deepEqual([r.status, r.body], [200, []]);
    const missing = await h.requestJson<ErrorBody>("/api/lore/noSuchNote01/backlinks");
    assert.deepEqual([missing.status, missing.body.error], [404, "NOT_FOUND"]);
    h.core.clearRequests();
    for (const id of ["a%2Fb", "x%22y", "a%20b", "%23lore"]) {
      const bad = await h.requestJson<ErrorBody>(`/api/lore/${id}/backlinks`);
      assert.equal(bad.status, 400, id);
    }
    assert.deepEqual(upstreamCalls(h), []);
  }, bare));

/** The note's ancestors below root, top first (a bare array, as the front end reads it). */
type Crumbs = { noteId: string; title: string }[];

Deno.test("breadcrumbs: the ancestors below root, top first, skipping the _share clone's path", () =>
  withHarness(async (h) => {
    const world = note(h, "World");
    const region = note(h, "Coast", world);
    const town = note(h, "Saltmarsh", region);
    h.core.store.createBranch({ noteId: town, parentNoteId: "_share" });
    assert.equal(h.core.store.branchesOf(town).at(-1)?.parentNoteId, "_share");
    h.core.clearRequests();
    const r = await h.requestJson<Crumbs>(`/api/lore/${town}/breadcrumbs`);
    assert.equal(r.status, 200);
    // neither root nor the note itself: the page shows its own first crumb and the title
    assert.deepEqual(r.body, [{ noteId: world, title: "World" }, {
      noteId: region,
      title: "Coast",
    }]);
    // the note and its ancestors in one round trip: the note read, one search
    assert.deepEqual(upstreamCalls(h).map((c) => c.split("?")[0]), [
      `GET /etapi/notes/${town}`,
      "GET /etapi/notes",
    ]);

    const root = await h.requestJson<Crumbs>("/api/lore/root/breadcrumbs");
    assert.deepEqual([root.status, root.body], [200, []]);
    const top = await h.requestJson<Crumbs>(`/api/lore/${world}/breadcrumbs`);
    assert.deepEqual([top.status, top.body], [200, []]);
    const onlyShared = note(h, "Broadsheet", "_share");
    const s = await h.requestJson<Crumbs>(`/api/lore/${onlyShared}/breadcrumbs`);
    assert.deepEqual(s.body.map((c) => c.noteId), ["_hidden", "_share"]);
  }, bare));

Deno.test("breadcrumbs: cycles and very deep trees stop (64 ancestors at most)", () =>
  withHarness(async (h) => {
    const s = h.core.store;
    const p = note(h, "Loop P");
    const q = note(h, "Loop Q", p);
    s.createBranch({ noteId: p, parentNoteId: q });
    s.deleteBranch(`root_${p}`);
    const loop = await h.requestJson<Crumbs>(`/api/lore/${q}/breadcrumbs`);
    assert.equal(loop.status, 200);
    assert.deepEqual(loop.body.map((c) => c.noteId), [p]);

    let parent = "root";
    const chain: string[] = [];
    for (let i = 0; i < 70; i++) chain.push(parent = note(h, `Depth ${i}`, parent));
    h.core.clearRequests();
    const deep = await h.requestJson<Crumbs>(`/api/lore/${chain.at(-1)}/breadcrumbs`);
    assert.equal(deep.body.length, 64);
    assert.equal(deep.body.at(-1)?.title, "Depth 68");
    assert.equal(deep.body[0].title, "Depth 5");
    // 8 ancestors per search: the note and 7 more ancestors read with the levels above them
    assert.equal(upstreamCalls(h).length, 16);

    const missing = await h.requestJson<ErrorBody>("/api/lore/noSuchNote01/breadcrumbs");
    assert.equal(missing.status, 404);
  }, bare));
