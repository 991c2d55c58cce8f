import assert from "node:assert/strict";
import {
  basicAuthAllows,
  buildShareView,
  guardsAllow,
  guardsOpenedBy,
  type ShareAttribute,
  type ShareNote,
  type ShareSnapshot,
  type ShareView,
} from "./tree_filter.ts";
import { prng } from "../../tests/helpers/prng.ts";

// ---------------------------------------------------------------------------------------------
// Builders

interface NoteSpec {
  children?: string[];
  /** Own labels: [name, value = "", isInheritable = false]. */
  labels?: [string, string?, boolean?][];
  /** Extra effective attributes (inherited ones carry another owner). */
  attrs?: ShareAttribute[];
  protected?: boolean;
}

function attr(
  owner: string,
  name: string,
  value = "",
  isInheritable = false,
  type: "label" | "relation" = "label",
): ShareAttribute {
  return { noteId: owner, type, name, value, isInheritable };
}

function snap(rootId: string, spec: Record<string, NoteSpec>): ShareSnapshot {
  const parents = new Map<string, string[]>();
  for (const [id, s] of Object.entries(spec)) {
    for (const c of s.children ?? []) parents.set(c, [...(parents.get(c) ?? []), id]);
  }
  const notes: ShareNote[] = Object.entries(spec).map(([id, s]) => ({
    noteId: id,
    title: `Title of ${id}`,
    isProtected: s.protected ?? false,
    parentNoteIds: parents.get(id) ?? ["root"],
    childNoteIds: s.children ?? [],
    attributes: [
      ...(s.labels ?? []).map(([name, value, inh]) => attr(id, name, value ?? "", inh ?? false)),
      ...(s.attrs ?? []),
    ],
  }));
  return { rootId, notes };
}

function basic(userPass: string): string {
  const bytes = new TextEncoder().encode(userPass);
  return "Basic " + btoa(String.fromCharCode(...bytes));
}

function publicSet(view: ShareView): string[] {
  return [...view.publicIds()].sort();
}

// ---------------------------------------------------------------------------------------------
// Visibility

Deno.test("tree: reachable notes are public, in BFS order with childNoteIds order", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["a", "c"] },
    a: { children: ["b"] },
    c: { children: ["d", "ghost"] },
    b: {},
    d: {},
  }));
  assert.deepEqual(view.publicIds(), ["r", "a", "c", "b", "d"]);
  for (const id of ["r", "a", "b", "c", "d"]) assert.equal(view.isPublic(id), true);
  assert.equal(view.isPublic("ghost"), false, "child id missing from the snapshot");
  assert.equal(view.resolve("ghost"), undefined);
  assert.equal(view.rootId, "r");
});

Deno.test("tree: snapshot notes not reachable from the root are never public", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["a"] },
    a: {},
    orphan: { children: ["orphanChild"] },
    orphanChild: {},
  }));
  assert.equal(view.isPublic("orphan"), false);
  assert.equal(view.isPublic("orphanChild"), false);
  assert.equal(view.resolve("orphan"), undefined);
  assert.deepEqual(view.flags("orphan"), {
    isDraft: false,
    isGmOnly: false,
    isProtected: false,
    shareAlias: null,
  });
  assert.equal(view.flags("nope"), undefined);
  // parentNoteIds are irrelevant: "a" claims "orphan" as a parent, nothing changes.
  const s = snap("r", { r: { children: ["a"] }, a: {}, orphan: {} });
  (s.notes[1] as { parentNoteIds: readonly string[] }).parentNoteIds = ["orphan", "r"];
  assert.deepEqual(publicSet(buildShareView(s)), ["a", "r"]);
});

Deno.test("tree: root missing from the snapshot → nothing public", () => {
  const view = buildShareView(snap("r", { a: { children: ["b"] }, b: {} }));
  assert.deepEqual(view.publicIds(), []);
  assert.equal(view.resolve("a"), undefined);
});

Deno.test("tree: #draft and #gmOnly hide the note and its whole subtree, whatever the value", () => {
  for (const [name, value] of [["draft", ""], ["draft", "false"], ["gmOnly", "false"]] as const) {
    const view = buildShareView(snap("r", {
      r: { children: ["a", "p"] },
      a: { labels: [[name, value]], children: ["b"] },
      b: { children: ["c"] },
      c: {},
      p: {},
    }));
    assert.deepEqual(publicSet(view), ["p", "r"], `${name}=${value}`);
  }
});

Deno.test("tree: only labels named exactly draft/gmOnly count; relations do not", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["a"] },
    a: {
      labels: [["Draft"], ["drafts"], ["gmonly"], [" draft"]],
      attrs: [
        attr("a", "draft", "x", false, "relation"),
        attr("a", "gmOnly", "y", true, "relation"),
      ],
    },
  }));
  assert.equal(view.isPublic("a"), true);
  assert.deepEqual(view.flags("a"), {
    isDraft: false,
    isGmOnly: false,
    isProtected: false,
    shareAlias: null,
  });
});

Deno.test("tree: a clone of a hidden note placed under a published note stays hidden", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["gm", "pub"] },
    gm: { labels: [["gmOnly"]], children: ["secret"] },
    pub: { children: ["secret"] },
    secret: { children: ["deeper"] },
    deeper: {},
  }));
  assert.deepEqual(publicSet(view), ["pub", "r"]);
  assert.equal(view.resolve("secret"), undefined);
  assert.equal(view.resolve("deeper"), undefined);
});

Deno.test("tree: diamond with one hidden side hides the join and below", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["L", "R"] },
    L: { labels: [["draft", "", true]], children: ["D"] },
    R: { children: ["D"] },
    D: { children: ["E"] },
    E: {},
  }));
  assert.deepEqual(publicSet(view), ["R", "r"]);
});

Deno.test("tree: non-inheritable #draft on an ancestor still hides descendants", () => {
  // Core would not copy the label into b's list, but a is on every path to b.
  const view = buildShareView(snap("r", {
    r: { children: ["a"] },
    a: { labels: [["draft", "", false]], children: ["b"] },
    b: { children: ["c"] },
    c: {},
  }));
  assert.deepEqual(view.publicIds(), ["r"]);
  assert.equal(view.flags("b")?.isDraft, false);
});

Deno.test("tree: inherited #draft/#gmOnly with another owner (template outside) hides", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["a", "b"] },
    a: { attrs: [attr("_template_character", "draft", "", false)], children: ["a1"] },
    a1: {},
    b: { attrs: [attr("elsewhere", "gmOnly", "false", true)] },
  }));
  assert.deepEqual(view.publicIds(), ["r"]);
  assert.equal(view.flags("a")?.isDraft, true);
  assert.equal(view.flags("b")?.isGmOnly, true);
});

Deno.test("tree: protected notes are hidden with their subtree", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["p", "q"] },
    p: { protected: true, children: ["pc"] },
    pc: {},
    q: {},
  }));
  assert.deepEqual(publicSet(view), ["q", "r"]);
  assert.deepEqual(view.flags("p"), {
    isDraft: false,
    isGmOnly: false,
    isProtected: true,
    shareAlias: null,
  });
});

Deno.test("tree: a flagged root makes nothing public", () => {
  for (const root of [{ labels: [["gmOnly"]] }, { protected: true }] as NoteSpec[]) {
    const view = buildShareView(snap("r", {
      r: { ...root, children: ["a"] },
      a: { labels: [["shareAlias", "home"]] },
    }));
    assert.deepEqual(view.publicIds(), []);
    assert.equal(view.resolve("r"), undefined);
    assert.equal(view.resolve("home"), undefined);
    assert.equal(basicAuthAllows(view, "a", null), false);
  }
});

Deno.test("tree: cycles terminate; a flagged note on a cycle hides the whole cycle", () => {
  const open = buildShareView(snap("r", {
    r: { children: ["a"] },
    a: { children: ["b", "a"] },
    b: { children: ["a", "r"] },
  }));
  assert.deepEqual(open.publicIds(), ["r", "a", "b"]);

  // a is reachable through r→a→b→a, which passes the flagged b.
  const closed = buildShareView(snap("r", {
    r: { children: ["a", "x"] },
    a: { children: ["b"] },
    b: { labels: [["draft"]], children: ["a"] },
    x: {},
  }));
  assert.deepEqual(publicSet(closed), ["r", "x"]);

  // A cycle back to the root through a flagged note hides the root itself.
  const rootLoop = buildShareView(snap("r", {
    r: { children: ["a"] },
    a: { labels: [["gmOnly"]], children: ["r"] },
  }));
  assert.deepEqual(rootLoop.publicIds(), []);
});

Deno.test("tree: malformed notes fail closed", () => {
  const s = snap("r", {
    r: { children: ["a", "b", "c", "d"] },
    a: {},
    b: {},
    c: {},
    d: {},
  });
  const notes = s.notes as unknown as Record<string, unknown>[];
  delete notes[1].attributes; // a: unknown labels
  delete notes[2].isProtected; // b: unknown protection
  notes.push({ ...notes[3] }); // c twice: which record is true?
  notes.push(null as unknown as Record<string, unknown>, { title: "no id" });
  const view = buildShareView(s);
  assert.deepEqual(publicSet(view), ["d", "r"]);
  assert.deepEqual(
    buildShareView({ rootId: "r", notes: null } as unknown as ShareSnapshot)
      .publicIds(),
    [],
  );
});

// ---------------------------------------------------------------------------------------------
// Aliases

Deno.test("alias: own trimmed label resolves; inherited, empty and relation aliases do not", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["a", "b", "c", "d"] },
    a: { labels: [["shareAlias", "  dragons  "]] },
    b: { attrs: [attr("a", "shareAlias", "inherited", true)] },
    c: { labels: [["shareAlias", "   "], ["shareAlias", "second"]] },
    d: { attrs: [attr("d", "shareAlias", "rel", false, "relation")] },
  }));
  assert.equal(view.resolve("dragons"), "a");
  assert.equal(view.resolve("  dragons  "), undefined);
  assert.equal(view.aliasOf("a"), "dragons");
  assert.equal(view.resolve("inherited"), undefined);
  assert.equal(view.aliasOf("b"), undefined);
  assert.equal(view.resolve("second"), "c", "first non-empty own alias");
  assert.equal(view.resolve("rel"), undefined);
  assert.equal(view.resolve("a"), "a", "ids still resolve");
  assert.equal(view.resolve(""), undefined);
  assert.equal(view.resolve("__proto__"), undefined);
  assert.equal(view.resolve("constructor"), undefined);
  assert.equal(view.flags("a")?.shareAlias, "dragons");
});

Deno.test("alias: collision between public notes → smaller noteId wins, loser keeps its id", () => {
  const spec = {
    r: { children: ["zeta", "alpha", "mid"] },
    zeta: { labels: [["shareAlias", "map"]] },
    alpha: { labels: [["shareAlias", "map "]] },
    mid: { labels: [["shareAlias", "map"]] },
  } satisfies Record<string, NoteSpec>;
  const view = buildShareView(snap("r", spec as Record<string, NoteSpec>));
  assert.equal(view.resolve("map"), "alpha");
  assert.equal(view.aliasOf("alpha"), "map");
  assert.equal(view.aliasOf("zeta"), undefined);
  assert.equal(view.aliasOf("mid"), undefined);
  assert.equal(view.resolve("zeta"), "zeta");
  // Order of the snapshot must not matter.
  const s = snap("r", spec as Record<string, NoteSpec>);
  const reversed = buildShareView({ rootId: "r", notes: [...s.notes].reverse() });
  assert.equal(reversed.resolve("map"), "alpha");
});

Deno.test("alias: a hidden note's alias changes no answer (collision incl. hidden)", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["b", "h", "orphanParent"] },
    // "a" sorts before "b" and carries the same alias, but it is hidden.
    a: { labels: [["shareAlias", "city"], ["draft"]] },
    b: { labels: [["shareAlias", "city"]] },
    h: { labels: [["gmOnly"]], children: ["a", "h2"] },
    h2: { labels: [["shareAlias", "vault"]] },
    orphanParent: {},
    lost: { labels: [["shareAlias", "lost"]] },
  }));
  assert.equal(view.resolve("city"), "b");
  assert.equal(view.aliasOf("b"), "city");
  assert.equal(view.resolve("vault"), undefined);
  assert.equal(view.resolve("lost"), undefined);
  assert.equal(view.aliasOf("h2"), undefined);
  assert.equal(view.flags("h2")?.shareAlias, "vault", "admin flags still report it");
});

Deno.test("alias: alias is tried before id, and never leaks a hidden id", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["p1", "p2", "hid"] },
    p1: { labels: [["shareAlias", "p2"]] },
    p2: {},
    hid: { labels: [["draft"]] },
    p3: {},
  }));
  assert.equal(view.resolve("p2"), "p1", "alias shadows the id, like Core");
  assert.equal(view.resolve("p1"), "p1");
  assert.equal(view.resolve("hid"), undefined);

  const shadow = buildShareView(snap("r", {
    r: { children: ["p1", "hid"] },
    p1: { labels: [["shareAlias", "hid"]] },
    hid: { labels: [["draft"]] },
  }));
  assert.equal(shadow.resolve("hid"), "p1");
});

// ---------------------------------------------------------------------------------------------
// Credentials

Deno.test("credentials: open notes have no groups and allow any header", () => {
  const view = buildShareView(snap("r", { r: { children: ["a"] }, a: {} }));
  assert.deepEqual(view.credentialGroups("a"), []);
  assert.equal(basicAuthAllows(view, "a", null), true);
  assert.equal(basicAuthAllows(view, "a", "garbage"), true);
  assert.equal(basicAuthAllows(view, "missing", null), false);
  assert.deepEqual(view.credentialGroups("missing"), [[]], "locked, not open");
});

Deno.test("credentials: nested credentials need a match in every group", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["outer"] },
    outer: {
      labels: [["shareCredentials", "gm:dragon", true], ["shareCredentials", "both:key", true]],
      children: ["inner"],
    },
    inner: {
      labels: [["shareCredentials", "player:wolf"], ["shareCredentials", "both:key"]],
      attrs: [
        attr("outer", "shareCredentials", "gm:dragon", true),
        attr("outer", "shareCredentials", "both:key", true),
      ],
      children: ["leaf"],
    },
    leaf: {},
  }));
  assert.deepEqual(view.credentialGroups("outer"), [["gm:dragon", "both:key"]]);
  assert.deepEqual(view.credentialGroups("inner"), [["gm:dragon", "both:key"], [
    "player:wolf",
    "both:key",
  ]]);
  // inner's labels are not inheritable, but inner is on the path: it still guards leaf.
  assert.deepEqual(view.credentialGroups("leaf"), view.credentialGroups("inner"));
  assert.equal(basicAuthAllows(view, "outer", basic("gm:dragon")), true);
  assert.equal(basicAuthAllows(view, "inner", basic("gm:dragon")), false);
  assert.equal(basicAuthAllows(view, "inner", basic("player:wolf")), false);
  assert.equal(basicAuthAllows(view, "inner", basic("both:key")), true);
  assert.equal(basicAuthAllows(view, "leaf", basic("both:key")), true);
  assert.equal(basicAuthAllows(view, "leaf", null), false);
});

Deno.test("credentials: guards name their owner; remembered unlocks open them one by one", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["outer"] },
    outer: { labels: [["shareCredentials", "gm:dragon", true]], children: ["inner"] },
    inner: {
      labels: [["shareCredentials", "player:wolf"]],
      attrs: [attr("outer", "shareCredentials", "gm:dragon", true)],
    },
  }));
  assert.deepEqual(view.credentialGuards("inner"), [
    { owner: "outer", values: ["gm:dragon"] },
    { owner: "inner", values: ["player:wolf"] },
  ]);
  assert.deepEqual(view.credentialGuards("r"), []);
  assert.deepEqual(view.credentialGuards("missing"), [{ owner: "", values: [] }]);
  const unlockedOuter = (g: { owner: string }) => g.owner === "outer";
  assert.equal(guardsAllow(view, "outer", null, unlockedOuter), true);
  // one password given with the form, the other remembered: both guards are opened
  assert.equal(guardsAllow(view, "inner", null, unlockedOuter), false);
  assert.equal(guardsAllow(view, "inner", "player:wolf", unlockedOuter), true);
  assert.equal(guardsAllow(view, "inner", "player:wolf"), false);
  assert.equal(guardsAllow(view, "missing", null, () => true), false, "never a hidden note");
  const all = [...view.credentialGuards("inner")];
  assert.deepEqual(guardsOpenedBy(all, "gm:dragon").map((g) => g.owner), ["outer"]);
  assert.deepEqual(guardsOpenedBy(all, "gm:dragon "), []);
});

Deno.test("credentials: every path counts (clone under an open and a guarded parent)", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["open", "guard"] },
    open: { children: ["shared"] },
    guard: { labels: [["shareCredentials", "u:p"]], children: ["shared"] },
    shared: {},
  }));
  assert.deepEqual(view.credentialGroups("open"), []);
  assert.deepEqual(view.credentialGroups("shared"), [["u:p"]]);
  assert.equal(basicAuthAllows(view, "shared", null), false);
  assert.equal(basicAuthAllows(view, "shared", basic("u:p")), true);
});

Deno.test("credentials: a credential inherited from outside the walk (template) guards", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["a"] },
    a: {
      attrs: [
        attr("_template_x", "shareCredentials", "t:1", false),
        attr("_template_x", "shareCredentials", "t:2", false),
      ],
      children: ["b"],
    },
    b: { attrs: [attr("other_tpl", "shareCredentials", "o:1", true)] },
  }));
  assert.deepEqual(view.credentialGroups("a"), [["t:1", "t:2"]]);
  // a's template credential also guards a's children (fail closed), plus b's own template.
  assert.deepEqual(view.credentialGroups("b"), [["t:1", "t:2"], ["o:1"]]);
  assert.equal(basicAuthAllows(view, "a", basic("t:2")), true);
  assert.equal(basicAuthAllows(view, "b", basic("t:2")), false);
});

Deno.test("credentials: root credentials, relations ignored, empty values never match", () => {
  const view = buildShareView(snap("r", {
    r: { labels: [["shareCredentials", "root:pw"]], children: ["a", "e"] },
    a: { attrs: [attr("a", "shareCredentials", "rel:x", false, "relation")] },
    e: { labels: [["shareCredentials", ""]] },
  }));
  assert.deepEqual(view.credentialGroups("a"), [["root:pw"]]);
  assert.equal(basicAuthAllows(view, "e", basic("root:pw")), false, "empty group value is a lock");
  assert.equal(basicAuthAllows(view, "e", "Basic "), false);
});

Deno.test("credentials: hidden notes are locked, whatever the header", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["h"] },
    h: { labels: [["draft"], ["shareCredentials", "u:p"]] },
  }));
  assert.deepEqual(view.credentialGroups("h"), [[]]);
  assert.equal(basicAuthAllows(view, "h", basic("u:p")), false);
});

Deno.test("basicAuthAllows: header parsing", () => {
  const view = buildShareView(snap("r", {
    r: { children: ["a"] },
    a: { labels: [["shareCredentials", "ünï:pässwörd"], ["shareCredentials", "u:p"]] },
  }));
  const ok = (h: string | null) => basicAuthAllows(view, "a", h);
  const good = basic("u:p"); // "Basic dTpw"
  assert.equal(ok(good), true);
  assert.equal(ok("basic dTpw"), true);
  assert.equal(ok("BASIC\tdTpw"), true);
  assert.equal(ok("  Basic   dTpw  \r\n"), true);
  assert.equal(ok(basic("ünï:pässwörd")), true, "UTF-8 credentials");
  for (
    const bad of [
      null,
      "",
      "Basic",
      "Basic ",
      "Bearer dTpw",
      "Basicd Tpw",
      "dTpw",
      "Basic dTpw=",
      "Basic dTp",
      "Basic dT!w",
      "Basic dT pw",
      "Basic ====",
      "Basic dTpw dTpw",
      "Basic " + btoa("up"), // no colon
      "Basic " + btoa("\xff\xfe:x"), // not UTF-8
      basic("u:p "),
      basic("u:"),
      basic("u:pp"),
      basic("U:p"),
      basic("ünï:pässwörd" + "x"),
    ]
  ) {
    assert.equal(ok(bad), false, JSON.stringify(bad));
  }
});

// ---------------------------------------------------------------------------------------------
// Performance

Deno.test("large: thousands of notes with cycles and clones build the right view", () => {
  const n = 5000;
  const notes: ShareNote[] = [];
  let drafts = 0;
  for (let i = 0; i < n; i++) {
    const children = [2 * i + 1, 2 * i + 2].filter((c) => c < n).map((c) => `n${c}`);
    if (i > 10 && i % 7 === 0) children.push(`n${i % 10}`); // clones upwards = cycles
    const attributes: ShareAttribute[] = [attr(`n${i}`, "lore"), attr("tpl", "iconClass", "x")];
    if (i % 97 === 0) attributes.push(attr(`n${i}`, "shareAlias", `a${i % 13}`));
    // Drafts only on leaves without an upward edge, so exactly those notes are hidden.
    if (i > n / 2 && i % 501 === 0 && i % 7 !== 0) {
      attributes.push(attr(`n${i}`, "draft"));
      drafts++;
    }
    notes.push({
      noteId: `n${i}`,
      title: `${i}`,
      isProtected: false,
      parentNoteIds: [],
      childNoteIds: children,
      attributes,
    });
  }
  const view = buildShareView({ rootId: "n0", notes });
  assert.equal(view.publicIds().length, n - drafts);
});

// ---------------------------------------------------------------------------------------------
// Property-based tests against a naive reference

type Rng = () => number;
const int = (rng: Rng, n: number) => Math.floor(rng() * n);
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, xs.length)];
const chance = (rng: Rng, p: number) => rng() < p;

const CRED_POOL = ["u:1", "u:2", "v:1", "ü:ß", "gm:x"];
const ALIAS_POOL = ["a", " a ", "b", "c", "", "  ", "__proto__", "toString"];
const DECOYS = ["Draft", "gmonly", "drafts", "shareAlias ", "shareCredential", "lore"];

/**
 * Random snapshot: a tree plus clones, optional back edges (cycles), orphans and ghost ids.
 * `deep` gives long chains (depth up to ~30) with few clones, so walks stay enumerable.
 */
function randomSnapshot(rng: Rng, cyclic: boolean, deep = false): ShareSnapshot {
  const n = deep ? 15 + int(rng, 16) : 1 + int(rng, cyclic ? 8 : 13);
  const ids: string[] = [];
  while (ids.length < n) {
    const id = Array.from({ length: 1 + int(rng, 3) }, () => pick(rng, [..."abcXYZ09_"])).join("");
    if (!ids.includes(id)) ids.push(id);
  }
  const children = new Map<string, string[]>(ids.map((id) => [id, []]));
  const addEdge = (p: string, c: string) => {
    const list = children.get(p)!;
    list.splice(int(rng, list.length + 1), 0, c);
  };
  const outside = ids.map((_, i) => i > 0 && chance(rng, 0.12));
  for (let i = 1; i < n; i++) {
    const candidates = ids.slice(0, i).filter((_, j) => outside[j] === outside[i]);
    if (candidates.length === 0) continue;
    // Mix deep chains and wide fans.
    const p = chance(rng, deep ? 0.85 : 0.4)
      ? candidates[candidates.length - 1]
      : pick(rng, candidates);
    addEdge(p, ids[i]);
  }
  for (let k = int(rng, deep ? 3 : Math.ceil(n / 2)); k > 0 && n > 1; k--) {
    const c = 1 + int(rng, n - 1);
    const p = int(rng, c);
    if (!children.get(ids[p])!.includes(ids[c])) addEdge(ids[p], ids[c]); // clone, still a DAG
  }
  if (cyclic) {
    for (let k = 1 + int(rng, 2); k > 0; k--) {
      const c = int(rng, n);
      const p = c + int(rng, n - c); // p ≥ c: back edge or self loop
      addEdge(ids[p], ids[c]);
    }
  }
  if (chance(rng, 0.2)) addEdge(pick(rng, ids), "ghost" + int(rng, 3));

  const own = new Map<string, ShareAttribute[]>();
  for (const id of ids) {
    const list: ShareAttribute[] = [];
    const add = (name: string, value: string, type: "label" | "relation" = "label") =>
      list.push(attr(id, name, value, chance(rng, 0.5), type));
    if (chance(rng, 0.07)) add("draft", pick(rng, ["", "false", "true"]));
    if (chance(rng, 0.05)) add("gmOnly", pick(rng, ["", "false"]));
    if (chance(rng, 0.15)) {
      for (let k = 1 + int(rng, 2); k > 0; k--) add("shareCredentials", pick(rng, CRED_POOL));
    }
    if (chance(rng, 0.35)) {
      for (let k = 1 + int(rng, 2); k > 0; k--) {
        add("shareAlias", chance(rng, 0.15) ? pick(rng, ids) : pick(rng, ALIAS_POOL));
      }
    }
    if (chance(rng, 0.15)) {
      add(pick(rng, ["draft", "gmOnly", "shareAlias", "shareCredentials"]), "x", "relation");
    }
    if (chance(rng, 0.15)) add(pick(rng, DECOYS), "");
    own.set(id, list);
  }
  const parentsOf = (id: string) => ids.filter((p) => children.get(p)!.includes(id));
  /** Every note above `id` along parent edges (cycle-safe), nearest first. */
  const ancestorsOf = (id: string) => {
    const seen = new Set<string>([id]);
    const out: string[] = [];
    for (let todo = parentsOf(id); todo.length > 0;) {
      const next: string[] = [];
      for (const p of todo) {
        if (seen.has(p)) continue;
        seen.add(p);
        out.push(p);
        next.push(...parentsOf(p));
      }
      todo = next;
    }
    return out;
  };
  const notes: ShareNote[] = ids.map((id) => {
    // Effective list like Core's: own, then the inheritable attributes of every ancestor
    // (inheritance is transitive), then template-like foreign owners.
    const attributes = [...own.get(id)!];
    for (const p of ancestorsOf(id)) {
      for (const a of own.get(p)!) if (a.isInheritable) attributes.push(a);
    }
    if (chance(rng, 0.12)) {
      const owner = chance(rng, 0.5) ? pick(rng, ["tpl1", "tpl2"]) : pick(rng, ids);
      const name = pick(rng, ["draft", "gmOnly", "shareCredentials", "shareAlias"]);
      attributes.push(
        attr(owner, name, pick(rng, [...CRED_POOL, ...ALIAS_POOL]), chance(rng, 0.5)),
      );
    }
    return {
      noteId: id,
      title: id,
      isProtected: chance(rng, 0.04),
      parentNoteIds: [...parentsOf(id), ...(chance(rng, 0.3) ? ["root"] : [])],
      childNoteIds: children.get(id)!,
      attributes,
    };
  });
  for (let i = notes.length - 1; i > 0; i--) {
    const j = int(rng, i + 1);
    [notes[i], notes[j]] = [notes[j], notes[i]];
  }
  return { rootId: ids[0], notes };
}

interface Expected {
  inTree: Set<string>;
  hidden: Set<string>;
  ancestors: Map<string, Set<string>>;
  /** Sort key per in-tree note: lexicographically smallest child-index path among shortest ones. */
  orderKey: Map<string, number[]>;
}

/**
 * Naive reference: enumerate every walk from the root in which no note appears more than twice.
 * On a DAG those are exactly the simple paths. With cycles this still covers every note that is
 * reachable through another (root→F simple, then F→N simple), so the definitions can be applied
 * walk by walk.
 */
function enumerateWalks(s: ShareSnapshot): Expected {
  const byId = new Map(s.notes.map((n) => [n.noteId, n]));
  const isFlagged = (n: ShareNote) =>
    n.isProtected ||
    n.attributes.some((a) => a.type === "label" && (a.name === "draft" || a.name === "gmOnly"));
  const e: Expected = {
    inTree: new Set(),
    hidden: new Set(),
    ancestors: new Map(),
    orderKey: new Map(),
  };
  if (!byId.has(s.rootId)) return e;
  const walk: string[] = [s.rootId];
  const path: number[] = [];
  let budget = 200_000;
  const lexLess = (a: number[], b: number[]) => {
    if (a.length !== b.length) return a.length < b.length;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
    return false;
  };
  const visit = () => {
    if (--budget < 0) throw new Error("walk budget exceeded: generator too large");
    const end = walk[walk.length - 1];
    e.inTree.add(end);
    if (walk.some((id) => isFlagged(byId.get(id)!))) e.hidden.add(end);
    const anc = e.ancestors.get(end) ?? new Set<string>();
    for (const id of walk) anc.add(id);
    e.ancestors.set(end, anc);
    const key = e.orderKey.get(end);
    if (!key || lexLess(path, key)) e.orderKey.set(end, [...path]);
    byId.get(end)!.childNoteIds.forEach((c, index) => {
      if (!byId.has(c) || walk.filter((id) => id === c).length >= 2) return;
      walk.push(c);
      path.push(index);
      visit();
      walk.pop();
      path.pop();
    });
  };
  visit();
  return e;
}

interface Reference {
  publicIds: string[];
  isPublic(id: string): boolean;
  resolve(x: string): string | undefined;
  aliasOf(id: string): string | undefined;
  groups(id: string): string[][];
}

function reference(s: ShareSnapshot): Reference & { expected: Expected } {
  const e = enumerateWalks(s);
  const byId = new Map(s.notes.map((n) => [n.noteId, n]));
  const pub = [...e.inTree].filter((id) => !e.hidden.has(id));
  pub.sort((a, b) => {
    const ka = e.orderKey.get(a)!, kb = e.orderKey.get(b)!;
    if (ka.length !== kb.length) return ka.length - kb.length;
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
    return 0;
  });
  const isPublic = (id: string) => pub.includes(id);
  const aliasOfNote = (id: string) =>
    byId.get(id)!.attributes
      .filter((a) => a.type === "label" && a.name === "shareAlias" && a.noteId === id)
      .map((a) => a.value.trim())
      .find((v) => v.length > 0);
  const winners: Record<string, string[]> = {};
  for (const id of pub) {
    const alias = aliasOfNote(id);
    if (alias !== undefined) (winners["#" + alias] ??= []).push(id);
  }
  const winner = (alias: string) => winners["#" + alias]?.sort()[0];
  return {
    expected: e,
    publicIds: pub,
    isPublic,
    resolve: (x) => winner(x) ?? (isPublic(x) ? x : undefined),
    aliasOf(id) {
      if (!isPublic(id)) return undefined;
      const alias = aliasOfNote(id);
      return alias !== undefined && winner(alias) === id ? alias : undefined;
    },
    groups(id) {
      if (!isPublic(id)) return [[]];
      const byOwner: Record<string, Set<string>> = {};
      for (const w of e.ancestors.get(id)!) {
        for (const a of byId.get(w)!.attributes) {
          if (a.type === "label" && a.name === "shareCredentials") {
            (byOwner["#" + a.noteId] ??= new Set()).add(a.value);
          }
        }
      }
      return Object.values(byOwner).map((set) => [...set]);
    },
  };
}

const canonicalGroups = (groups: readonly (readonly string[])[]) =>
  groups.map((g) => JSON.stringify([...g].sort())).sort();

/** Every string worth asking `resolve` about for this snapshot. */
function queries(s: ShareSnapshot): string[] {
  const out = new Set<string>(["", "ghost0", "__proto__", "constructor", "root", "_share"]);
  for (const n of s.notes) {
    out.add(n.noteId);
    for (const a of n.attributes) out.add(a.value).add(a.value.trim());
  }
  for (const x of ALIAS_POOL) out.add(x);
  return [...out];
}

function withoutHiddenAliases(s: ShareSnapshot, hidden: (id: string) => boolean): ShareSnapshot {
  return {
    rootId: s.rootId,
    notes: s.notes.map((n) => ({
      ...n,
      attributes: n.attributes.filter((a) => !(a.name === "shareAlias" && hidden(a.noteId))),
    })),
  };
}

function checkSnapshot(s: ShareSnapshot): void {
  const view = buildShareView(s);
  const ref = reference(s);
  const ids = s.notes.map((n) => n.noteId);
  assert.deepEqual([...view.publicIds()], ref.publicIds, "publicIds");
  for (const id of [...ids, "ghost0", "ghost1", "tpl1"]) {
    assert.equal(view.isPublic(id), ref.isPublic(id), `isPublic(${id})`);
    assert.equal(view.aliasOf(id), ref.aliasOf(id), `aliasOf(${id})`);
    assert.deepEqual(
      canonicalGroups(view.credentialGroups(id)),
      canonicalGroups(ref.groups(id)),
      `credentialGroups(${id})`,
    );
  }
  for (const q of queries(s)) {
    const r = view.resolve(q);
    assert.equal(r, ref.resolve(q), `resolve(${JSON.stringify(q)})`);
    assert.ok(r === undefined || view.isPublic(r), "resolve() only returns public notes");
  }
  // Flags reported for every snapshot note.
  for (const n of s.notes) {
    const labels = n.attributes.filter((a) => a.type === "label").map((a) => a.name);
    const f = view.flags(n.noteId)!;
    assert.equal(f.isDraft, labels.includes("draft"));
    assert.equal(f.isGmOnly, labels.includes("gmOnly"));
    assert.equal(f.isProtected, n.isProtected);
    const own = n.attributes
      .filter((a) => a.type === "label" && a.name === "shareAlias" && a.noteId === n.noteId)
      .map((a) => a.value.trim())
      .find((v) => v !== "");
    assert.equal(f.shareAlias, own ?? null);
  }
  // Every note on every in-tree walk to a public note is public.
  for (const id of view.publicIds()) {
    for (const w of ref.expected.ancestors.get(id)!) assert.ok(view.isPublic(w), `ancestor ${w}`);
  }
  // Basic auth follows the groups: a credential works iff every group contains it.
  for (const id of view.publicIds()) {
    const groups = ref.groups(id);
    for (const cred of [...CRED_POOL, "nobody:x"]) {
      const expected = groups.every((g) => g.includes(cred));
      assert.equal(basicAuthAllows(view, id, basic(cred)), expected, `auth ${id} ${cred}`);
    }
  }
  // No oracle: dropping all hidden notes' alias labels changes no public answer.
  const stripped = buildShareView(withoutHiddenAliases(s, (id) => !view.isPublic(id)));
  assert.deepEqual(stripped.publicIds(), view.publicIds());
  for (const id of ids) {
    assert.equal(stripped.isPublic(id), view.isPublic(id));
    assert.equal(stripped.aliasOf(id), view.aliasOf(id));
  }
  for (const q of queries(s)) assert.equal(stripped.resolve(q), view.resolve(q));
}

function baseSeed(): number {
  let fromEnv: string | undefined;
  try {
    fromEnv = Deno.env.get("PROPERTY_SEED");
  } catch {
    fromEnv = undefined; // no --allow-env: fall back to a fresh seed
  }
  return fromEnv ? Number(fromEnv) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
}

Deno.test("property: buildShareView matches a naive walk-enumerating reference", () => {
  const seed = baseSeed();
  const rng = prng(seed);
  const cases = 1000;
  let publicSeen = 0, hiddenSeen = 0, cyclicCases = 0;
  let maxDepth = 0;
  for (let i = 0; i < cases; i++) {
    const cyclic = i % 4 === 3;
    const s = randomSnapshot(rng, cyclic, i % 8 === 1);
    try {
      checkSnapshot(s);
    } catch (err) {
      console.error(
        `property failure: rerun with PROPERTY_SEED=${seed} (case ${i})\n` +
          JSON.stringify(s, null, 1),
      );
      throw err;
    }
    const view = buildShareView(s);
    maxDepth = Math.max(maxDepth, depthOf(s));
    publicSeen += view.publicIds().length;
    hiddenSeen += s.notes.length - view.publicIds().length;
    if (cyclic) cyclicCases++;
  }
  // The generator must actually exercise both outcomes.
  assert.ok(publicSeen > cases && hiddenSeen > cases / 2, `${publicSeen}/${hiddenSeen}`);
  assert.ok(cyclicCases >= cases / 5);
  assert.ok(maxDepth >= 12, `deepest tree ${maxDepth}`);
});

/** Longest shortest-path depth from the root (BFS levels). */
function depthOf(s: ShareSnapshot): number {
  const byId = new Map(s.notes.map((n) => [n.noteId, n]));
  const level = new Map<string, number>([[s.rootId, 0]]);
  const queue = byId.has(s.rootId) ? [s.rootId] : [];
  for (let head = 0; head < queue.length; head++) {
    for (const c of byId.get(queue[head])!.childNoteIds) {
      if (byId.has(c) && !level.has(c)) {
        level.set(c, level.get(queue[head])! + 1);
        queue.push(c);
      }
    }
  }
  return Math.max(0, ...level.values());
}

Deno.test("property: the generator is deterministic for a given seed", () => {
  const a = randomSnapshot(prng(42), true);
  const b = randomSnapshot(prng(42), true);
  assert.deepEqual(a, b);
  assert.deepEqual(randomSnapshot(prng(7), false, true), randomSnapshot(prng(7), false, true));
});
