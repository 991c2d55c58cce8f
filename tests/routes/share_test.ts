/** Share settings (`/api/share`, `/api/share/tree`) over HTTP against the Core double. */
import type { ShareTreeEntry } from "../../src/routes/share.ts";
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";
import { HARBOR_ALIAS, W } from "../../sims/world.ts";

interface RootInfo {
  noteId: string;
  title: string;
  shareAlias: string | null;
  isPublished: boolean;
}
interface ShareBody {
  configured: boolean;
  noteId: string | null;
  title: string | null;
  alias: string | null;
  url: string | null;
  isPublished: boolean;
  conflict: RootInfo[];
}
interface PutBody {
  shareRoot: RootInfo | null;
  unsharedNoteIds: string[];
  keptBranches: string[];
}
interface ErrorBody {
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

const ROOT_SEARCHES = [
  "GET /etapi/notes?search=%23shareRoot",
  "GET /etapi/notes?search=%23shareRoot&ancestorNoteId=_share",
];
const GUIDE_INFO: RootInfo = {
  noteId: W.guide,
  title: "Player's Guide",
  shareAlias: null,
  isPublished: true,
};

/** `GET /api/share`'s answer for one root (or none), and the notes of a conflict. */
function shareAnswer(h: Harness, root: RootInfo | null, conflict: RootInfo[] = []): ShareBody {
  if (!root) {
    return {
      configured: false,
      noteId: null,
      title: null,
      alias: null,
      url: null,
      isPublished: false,
      conflict,
    };
  }
  const page = `${h.url}/public/lore/${root.shareAlias ?? root.noteId}`;
  return {
    configured: true,
    noteId: root.noteId,
    title: root.title,
    alias: root.shareAlias,
    url: root.isPublished ? page : null,
    isPublished: root.isPublished,
    conflict,
  };
}

function addNote(
  h: Harness,
  title: string,
  parentNoteId: string = W.loreRoot,
  labels: Record<string, string> = {},
): string {
  const { note } = h.core.store.createNote({ parentNoteId, title, type: "text", content: "" });
  for (const [name, value] of Object.entries(labels)) {
    h.core.store.createAttribute({ noteId: note.noteId, type: "label", name, value });
  }
  return note.noteId;
}

/** `name=value` of the labels a note owns, from the double's store. */
const ownLabels = (h: Harness, noteId: string) =>
  h.core.store.ownAttributes(noteId).filter((a) => a.type === "label").map((a) => a.name);
const parents = (h: Harness, noteId: string) =>
  h.core.store.branchesOf(noteId).map((b) => b.parentNoteId).sort();
const shareRootLabelId = (h: Harness, noteId: string) =>
  h.core.store.ownAttributes(noteId).find((a) => a.name === "shareRoot")!.attributeId;

/** Reads run in parallel, so their arrival order is not fixed: compare the first n as a set. */
function assertCalls(h: Harness, parallel: string[], sequential: string[] = []) {
  const calls = upstreamCalls(h);
  assert.deepEqual(calls.slice(0, parallel.length).sort(), [...parallel].sort());
  assert.deepEqual(calls.slice(parallel.length), sequential);
}

function put(h: Harness, body: unknown) {
  h.core.clearRequests();
  return h.requestJson<PutBody & ErrorBody>("/api/share", { method: "PUT", json: body });
}

// --- GET /api/share -----------------------------------------------------------------------------

Deno.test("GET /api/share: the world's published root, found with two parallel searches", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const r = await h.requestJson<ShareBody>("/api/share");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, shareAnswer(h, GUIDE_INFO));
    assert.equal(r.body.url, `${h.url}/public/lore/${W.guide}`);
    assertCalls(h, ROOT_SEARCHES);
  }));

Deno.test("GET /api/share: several owners are a conflict, all listed; inherited labels do not count", () =>
  withHarness(async (h) => {
    const folder = addNote(h, "Atlas Folder");
    h.core.store.createAttribute({
      noteId: folder,
      type: "label",
      name: "shareRoot",
      value: "",
      isInheritable: true,
    });
    h.core.store.createAttribute({
      noteId: folder,
      type: "label",
      name: "shareAlias",
      value: "  atlas  ",
    });
    const child = addNote(h, "Aardvark Child", folder); // inherits #shareRoot, owns none
    const zed = addNote(h, "Zed's Notes", W.loreRoot, { shareRoot: "" });
    const r = await h.requestJson<ShareBody>("/api/share");
    // no owner is picked (not even the published one): the GM has to choose
    assert.deepEqual(
      r.body,
      shareAnswer(h, null, [
        { noteId: folder, title: "Atlas Folder", shareAlias: "atlas", isPublished: false },
        GUIDE_INFO,
        { noteId: zed, title: "Zed's Notes", shareAlias: null, isPublished: false },
      ]),
    );
    assert.ok(!r.body.conflict.some((n) => n.noteId === child));
  }));

Deno.test("GET /api/share: a root that lives only under _share is found and published", () =>
  withHarness(async (h) => {
    // Core's plain search skips notes whose only placement is the hidden _share tree
    const weak = addNote(h, "Almanac", "_share", { shareRoot: "", shareAlias: "almanac" });
    h.core.store.deleteAttribute(shareRootLabelId(h, W.guide));
    const r = await h.requestJson<ShareBody>("/api/share");
    assert.deepEqual(
      r.body,
      shareAnswer(h, { noteId: weak, title: "Almanac", shareAlias: "almanac", isPublished: true }),
    );
    assert.equal(r.body.url, `${h.url}/public/lore/almanac`);
  }));

Deno.test("GET /api/share: no owner → null; an unpublished root says so", () =>
  withHarness(async (h) => {
    h.core.store.deleteBranch(`_share_${W.guide}`);
    let r = await h.requestJson<ShareBody>("/api/share");
    // an unpublished root has no page
    assert.deepEqual(r.body, shareAnswer(h, { ...GUIDE_INFO, isPublished: false }));
    assert.equal(r.body.url, null);
    h.core.store.deleteAttribute(shareRootLabelId(h, W.guide));
    r = await h.requestJson<ShareBody>("/api/share");
    assert.deepEqual(r.body, shareAnswer(h, null));
  }));

// --- PUT /api/share -----------------------------------------------------------------------------

Deno.test("PUT /api/share: moves the root — new one placed and labelled, old one retired", () =>
  withHarness(async (h) => {
    const oldLabel = shareRootLabelId(h, W.guide);
    const r = await put(h, { noteId: W.charOskar });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      shareRoot: { noteId: W.charOskar, title: "Oskar Venn", shareAlias: null, isPublished: true },
      unsharedNoteIds: [W.guide],
      keptBranches: [],
    });
    assertCalls(h, [...ROOT_SEARCHES, `GET /etapi/notes/${W.charOskar}`], [
      "POST /etapi/branches",
      "POST /etapi/attributes",
      `DELETE /etapi/attributes/${oldLabel}`,
      `GET /etapi/branches/_share_${W.guide}`,
      `DELETE /etapi/branches/_share_${W.guide}`,
    ]);
    const bodies = h.core.requests.filter((q) => q.method === "POST").map((q) =>
      JSON.parse(q.bodyText!)
    );
    assert.deepEqual(bodies, [
      { noteId: W.charOskar, parentNoteId: "_share" },
      { noteId: W.charOskar, type: "label", name: "shareRoot", value: "" },
    ]);
    // the store: new root under _share with its label; old root keeps living, unshared
    assert.deepEqual(parents(h, W.charOskar), ["_share", W.loreRoot]);
    assert.ok(ownLabels(h, W.charOskar).includes("shareRoot"));
    assert.deepEqual(parents(h, W.guide), [W.loreRoot]);
    assert.ok(!ownLabels(h, W.guide).includes("shareRoot"));
    const after = await h.requestJson<ShareBody>("/api/share");
    assert.deepEqual(after.body.noteId, W.charOskar);
    assert.deepEqual(after.body.conflict, []);
  }));

Deno.test("PUT /api/share: the current root again changes nothing", () =>
  withHarness(async (h) => {
    const r = await put(h, { noteId: W.guide });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { shareRoot: GUIDE_INFO, unsharedNoteIds: [], keptBranches: [] });
    assertCalls(h, [...ROOT_SEARCHES, `GET /etapi/notes/${W.guide}`]);
  }));

Deno.test("PUT /api/share: a note already under _share keeps its branch (no POST that resets it)", () =>
  withHarness(async (h) => {
    h.core.store.createBranch({ noteId: W.locReef, parentNoteId: "_share", prefix: "Reef" });
    const before = h.core.store.getBranch(`_share_${W.locReef}`)!;
    const r = await put(h, { noteId: W.locReef });
    assert.equal(r.status, 200);
    assert.equal(r.body.shareRoot?.noteId, W.locReef);
    assert.ok(!upstreamCalls(h).includes("POST /etapi/branches"));
    const after = h.core.store.getBranch(`_share_${W.locReef}`)!;
    assert.equal(after.notePosition, before.notePosition);
    assert.equal(after.prefix, "Reef");
    assert.ok(ownLabels(h, W.locReef).includes("shareRoot"));
  }));

Deno.test("PUT /api/share: null unshares every root", () =>
  withHarness(async (h) => {
    const second = addNote(h, "Second Root", W.loreRoot, { shareRoot: "" });
    const r = await put(h, { noteId: null });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      shareRoot: null,
      unsharedNoteIds: [W.guide, second],
      keptBranches: [],
    });
    assert.ok(!ownLabels(h, W.guide).includes("shareRoot"));
    assert.ok(!ownLabels(h, second).includes("shareRoot"));
    assert.deepEqual(parents(h, W.guide), [W.loreRoot]);
    assert.ok(!upstreamCalls(h).some((c) => c.startsWith("POST")));
    const after = await h.requestJson<ShareBody>("/api/share");
    assert.deepEqual(after.body, shareAnswer(h, null));
  }));

Deno.test("PUT /api/share: a weak-only old root keeps its _share branch and is reported", () =>
  withHarness(async (h) => {
    const weak = addNote(h, "Almanac", "_share", { shareRoot: "" });
    const r = await put(h, { noteId: W.charOskar });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.unsharedNoteIds, [weak, W.guide]);
    assert.deepEqual(r.body.keptBranches, [`_share_${weak}`]);
    assert.ok(h.core.store.getNote(weak), "the weak-only note still exists");
    assert.deepEqual(parents(h, weak), ["_share"]);
    assert.ok(!ownLabels(h, weak).includes("shareRoot"));
    assert.ok(!upstreamCalls(h).includes(`DELETE /etapi/branches/_share_${weak}`));
    assert.deepEqual(parents(h, W.guide), [W.loreRoot]);
  }));

Deno.test("PUT /api/share: a missing note is 404 and nothing is written", () =>
  withHarness(async (h) => {
    const r = await put(h, { noteId: "noSuchNote01" });
    assert.equal(r.status, 404);
    assert.equal(r.body.error, "NOT_FOUND");
    assert.ok(upstreamCalls(h).every((c) => c.startsWith("GET ")));
    assert.ok(ownLabels(h, W.guide).includes("shareRoot"));
    assertNoSecrets(h, JSON.stringify(r.body));
  }));

Deno.test("PUT /api/share: invalid bodies, system notes and injection attempts are 400 with no upstream call", () =>
  withHarness(async (h) => {
    const bad: unknown[] = [
      {},
      { noteId: "" },
      { noteId: 42 },
      { noteId: "a/b" },
      { noteId: "..%2F_share" },
      { noteId: "../etapi/notes/x" },
      { noteId: 'x" or #lore' },
      { noteId: "x\\y" },
      { noteId: "x".repeat(129) },
      { noteId: null, extra: true },
      { noteId: "_share" },
      { noteId: "root" },
      { noteId: "_hidden" },
      [W.guide],
    ];
    for (const body of bad) {
      const r = await put(h, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error, "INVALID_REQUEST");
      assert.deepEqual(upstreamCalls(h), [], JSON.stringify(body));
    }
    const missingField = await put(h, {});
    assert.match(JSON.stringify(missingField.body.details), /body\.noteId/);
  }));

Deno.test("PUT /api/share: a failed step rolls back every earlier step", () =>
  withHarness(async (h) => {
    const oldLabel = shareRootLabelId(h, W.guide);
    h.core.fault({ method: "DELETE", path: `/etapi/attributes/${oldLabel}`, status: 500 });
    const r = await put(h, { noteId: W.charOskar });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.match(r.body.message, /nothing was changed/);
    assert.equal(r.body.details?.failedStep, `remove #shareRoot from ${W.guide}`);
    assert.deepEqual(r.body.details?.rolledBack, [
      `label ${W.charOskar} #shareRoot`,
      `place ${W.charOskar} under _share`,
    ]);
    // Core is as before: Oskar unshared and unlabelled, the guide still the published root
    assert.deepEqual(parents(h, W.charOskar), [W.loreRoot]);
    assert.ok(!ownLabels(h, W.charOskar).includes("shareRoot"));
    assert.ok(ownLabels(h, W.guide).includes("shareRoot"));
    assert.deepEqual(parents(h, W.guide), ["_share", W.loreRoot]);
    assertNoSecrets(h, JSON.stringify(r.body));
  }));

Deno.test("PUT /api/share: a removed _share branch is restored in place when a later step fails", () =>
  withHarness(async (h) => {
    const second = addNote(h, "Second Root", W.loreRoot, { shareRoot: "" });
    h.core.store.createBranch({ noteId: second, parentNoteId: "_share" });
    const guideBranch = { ...h.core.store.getBranch(`_share_${W.guide}`)! };
    h.core.fault({
      method: "DELETE",
      path: `/etapi/attributes/${shareRootLabelId(h, second)}`,
      status: 500,
    });
    const r = await put(h, { noteId: W.charOskar });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.deepEqual(r.body.details?.rolledBack, [
      `take ${W.guide} out of _share`,
      `remove #shareRoot from ${W.guide}`,
      `label ${W.charOskar} #shareRoot`,
      `place ${W.charOskar} under _share`,
    ]);
    const restored = h.core.store.getBranch(`_share_${W.guide}`)!;
    assert.equal(restored.notePosition, guideBranch.notePosition);
    assert.equal(restored.prefix, guideBranch.prefix);
    assert.ok(ownLabels(h, W.guide).includes("shareRoot"));
    assert.deepEqual(parents(h, W.charOskar), [W.loreRoot]);
  }));

Deno.test("PUT /api/share: an undo that fails too → 502 PARTIAL_FAILURE with exact details", () =>
  withHarness(async (h) => {
    h.core.fault({ method: "POST", path: "/etapi/attributes", status: 500 });
    h.core.fault({ method: "DELETE", path: `/etapi/branches/_share_${W.charOskar}`, status: 500 });
    const r = await put(h, { noteId: W.charOskar });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "PARTIAL_FAILURE");
    assert.deepEqual(r.body.details, {
      failedStep: `label ${W.charOskar} #shareRoot`,
      cause: "UPSTREAM_ERROR",
      completed: [`place ${W.charOskar} under _share`],
      rolledBack: [],
      leftBehind: [`place ${W.charOskar} under _share`],
    });
    // what the report says is what Core holds
    assert.deepEqual(parents(h, W.charOskar), ["_share", W.loreRoot]);
    assert.ok(ownLabels(h, W.guide).includes("shareRoot"));
    assertNoSecrets(h, JSON.stringify(r.body));
  }));

Deno.test("PUT /api/share: a note of a conflict becomes the only root; the others are retired", () =>
  withHarness(async (h) => {
    // a second published owner, as Core's own UI or another tool could leave it
    h.core.store.createBranch({ noteId: W.locChart, parentNoteId: "_share" });
    const chartLabel = h.core.store.createAttribute({
      noteId: W.locChart,
      type: "label",
      name: "shareRoot",
      value: "",
    });
    const guideLabel = shareRootLabelId(h, W.guide);
    assert.equal((await h.requestJson<ShareBody>("/api/share")).body.conflict.length, 2);
    const r = await put(h, { noteId: W.locChart });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      shareRoot: {
        noteId: W.locChart,
        title: "Chart of the Shattered Coast",
        shareAlias: null,
        isPublished: true,
      },
      unsharedNoteIds: [W.guide],
      keptBranches: [],
    });
    // already placed and labelled: only the other owner is touched
    assertCalls(h, [...ROOT_SEARCHES, `GET /etapi/notes/${W.locChart}`], [
      `DELETE /etapi/attributes/${guideLabel}`,
      `GET /etapi/branches/_share_${W.guide}`,
      `DELETE /etapi/branches/_share_${W.guide}`,
    ]);
    assert.ok(
      h.core.store.ownAttributes(W.locChart).some((a) => a.attributeId === chartLabel.attributeId),
    );
    assert.ok(!ownLabels(h, W.guide).includes("shareRoot"));
    const after = await h.requestJson<ShareBody>("/api/share");
    assert.deepEqual(after.body, shareAnswer(h, r.body.shareRoot));
  }));

Deno.test("PUT /api/share: resolving a conflict that fails halfway reports exactly what Core holds", () =>
  withHarness(async (h) => {
    h.core.store.createBranch({ noteId: W.locChart, parentNoteId: "_share" });
    h.core.store.createAttribute({
      noteId: W.locChart,
      type: "label",
      name: "shareRoot",
      value: "",
    });
    const zed = addNote(h, "Zed's Notes", W.loreRoot, { shareRoot: "" });
    h.core.fault({
      method: "DELETE",
      path: `/etapi/attributes/${shareRootLabelId(h, zed)}`,
      status: 500,
    });
    h.core.fault({ method: "POST", path: "/etapi/attributes", status: 500 }); // an undo fails too
    const r = await put(h, { noteId: W.locChart });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "PARTIAL_FAILURE");
    assert.deepEqual(r.body.details, {
      failedStep: `remove #shareRoot from ${zed}`,
      cause: "UPSTREAM_ERROR",
      completed: [`remove #shareRoot from ${W.guide}`, `take ${W.guide} out of _share`],
      rolledBack: [`take ${W.guide} out of _share`],
      leftBehind: [`remove #shareRoot from ${W.guide}`],
    });
    // the report is what Core holds: the guide unlabelled but back under _share, two owners left
    assert.ok(!ownLabels(h, W.guide).includes("shareRoot"));
    assert.deepEqual(parents(h, W.guide), ["_share", W.loreRoot]);
    h.core.clearFaults();
    const now = await h.requestJson<ShareBody>("/api/share");
    assert.deepEqual(now.body.configured, false);
    assert.deepEqual(now.body.conflict.map((n) => n.noteId), [W.locChart, zed]);
    assertNoSecrets(h, JSON.stringify(r.body));
  }));

// --- GET /api/share/tree ------------------------------------------------------------------------

Deno.test("GET /api/share/tree: flags for every lore note and the share subtree, by title", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const r = await h.requestJson<ShareTreeEntry[]>("/api/share/tree");
    assert.equal(r.status, 200);
    const notes = r.body;
    const byId = new Map(notes.map((n) => [n.noteId, n]));
    const flags = (id: string) => {
      const { noteId: _id, title: _t, loreType: _l, dateModified: _d, ...rest } = byId.get(id)!;
      return rest;
    };
    // the Shared page's type line and the note's last change
    assert.equal(byId.get(W.charMira)?.loreType, "character");
    assert.equal(byId.get(W.guide)?.loreType, null);
    for (const n of notes) {
      assert.ok(n.dateModified === null || !Number.isNaN(Date.parse(n.dateModified)), n.noteId);
    }
    assert.match(byId.get(W.charMira)!.dateModified!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const none = {
      isDraft: false,
      isGmOnly: false,
      shareAlias: null,
      isProtected: false,
      isShared: false,
    };
    const shared = { ...none, isShared: true };
    assert.deepEqual(flags(W.guide), shared); // the root itself
    assert.deepEqual(flags(W.guideWelcome), shared);
    assert.deepEqual(flags(W.charMira), shared); // a lore note cloned into the guide
    assert.deepEqual(flags(W.locHarbor), { ...shared, shareAlias: HARBOR_ALIAS });
    assert.deepEqual(flags(W.imgChart), shared);
    // #shareCredentials: still public, only behind HTTP Basic — so shared, and protected
    assert.deepEqual(flags(W.guideVault), { ...shared, isProtected: true });
    assert.deepEqual(flags(W.guideVaultLedger), { ...shared, isProtected: true });
    assert.deepEqual(flags(W.guideDraft), { ...none, isDraft: true });
    assert.deepEqual(flags(W.guideGmOnly), { ...none, isGmOnly: true }); // also cloned under Welcome
    assert.deepEqual(flags(W.guideProtected), { ...none, isProtected: true });
    assert.deepEqual(flags(W.guideWip), { ...none, isDraft: true }); // own inheritable #draft
    assert.deepEqual(flags(W.guideWipChild), { ...none, isDraft: true }); // inherited #draft
    assert.deepEqual(flags(W.charOskar), none); // lore outside the subtree
    assert.deepEqual(flags(W.questLamp), none);
    // 16 lore notes + 11 non-lore notes of the guide's subtree
    assert.equal(notes.length, 27);
    assert.equal(notes[0].title, "Brannoch the Drowned");
    // a protected note's title is a placeholder: titles sort, the placeholder comes last
    const titles = notes.filter((n) => n.noteId !== W.guideProtected).map((n) => n.title);
    const sorted = [...titles].sort(
      new Intl.Collator("en", { sensitivity: "base", numeric: true }).compare,
    );
    assert.deepEqual(titles, sorted);
    // a protected note's title is a placeholder: it sorts last
    assert.equal(notes.at(-1)?.noteId, W.guideProtected);
    // one round for the root, one parallel round for lore + subtree: no per-note calls
    const calls = upstreamCalls(h);
    assert.equal(calls.length, 4);
    assert.deepEqual(calls.slice(0, 2).sort(), ROOT_SEARCHES);
    assert.deepEqual(calls.slice(2).sort(), [
      "GET /etapi/notes?search=%23lore",
      `GET /etapi/notes?search=note.noteId+%21%3D+%27%27&ancestorNoteId=${W.guide}&includeArchivedNotes=true`,
    ]);
  }));

Deno.test("GET /api/share/tree: an unpublished root shares nothing; without a root, lore only", () =>
  withHarness(async (h) => {
    h.core.store.deleteBranch(`_share_${W.guide}`);
    let r = await h.requestJson<ShareTreeEntry[]>("/api/share/tree");
    assert.ok(r.body.some((n) => n.noteId === W.guideWelcome));
    assert.ok(r.body.every((n) => !n.isShared));

    h.core.store.deleteAttribute(shareRootLabelId(h, W.guide));
    h.core.clearRequests();
    r = await h.requestJson<ShareTreeEntry[]>("/api/share/tree");
    assert.equal(r.body.length, 16); // lore notes only
    assert.ok(r.body.every((n) => !n.isShared));
    assertCalls(h, ROOT_SEARCHES, ["GET /etapi/notes?search=%23lore"]);
  }));

Deno.test("GET /api/share/tree: several owners → nothing shared (the conflict is GET /api/share's)", () =>
  withHarness(async (h) => {
    addNote(h, "Zed's Notes", W.loreRoot, { shareRoot: "", lore: "" });
    h.core.clearRequests();
    const r = await h.requestJson<ShareTreeEntry[]>("/api/share/tree");
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 17); // the 16 lore notes and Zed's: no subtree is read
    assert.ok(r.body.every((n) => !n.isShared));
    assertCalls(h, ROOT_SEARCHES, ["GET /etapi/notes?search=%23lore"]);
  }));

Deno.test("GET /api/share/tree: lore flags come from effective attributes", () =>
  withHarness(async (h) => {
    // an inheritable #gmOnly on a lore folder flags its lore children, shared or not
    const folder = addNote(h, "Secret Societies", W.guide, { lore: "" });
    h.core.store.createAttribute({
      noteId: folder,
      type: "label",
      name: "gmOnly",
      value: "false", // any value counts, like Core's share renderer
      isInheritable: true,
    });
    const member = addNote(h, "The Tidewatch", folder, { lore: "", shareAlias: " " });
    const r = await h.requestJson<ShareTreeEntry[]>("/api/share/tree");
    const entry = (id: string) => r.body.find((n) => n.noteId === id)!;
    assert.deepEqual(
      [entry(folder).isGmOnly, entry(folder).isShared, entry(member).isGmOnly],
      [true, false, true],
    );
    assert.equal(entry(member).isShared, false);
    assert.equal(entry(member).shareAlias, null); // blank alias is no alias
  }));
