/**
 * Conformance steps: share settings, the public share API and the public site. Without `--share`
 * only what changes nothing outside the scratch note runs: reads, refusals, and proof that the
 * suite's unpublished notes stay invisible. With `--share` the suite's "Guide" note becomes the
 * share root (the run records the previous one and puts it back afterwards); then the published
 * note links to and includes hidden notes, which visitors must never see named, and a second
 * `#shareRoot` set in Core behind the service's back makes a conflict that shares nothing until
 * `PUT /api/share` names the intended root.
 *
 * @module
 */
import { REDACTION_HTML } from "../../src/sanitize/redaction.ts";
import { z } from "zod";
import { labelDirectly } from "./core_direct.ts";
import {
  type Answer,
  attributeSchema,
  check,
  createLore,
  expectStatus,
  factOf,
  noteOf,
  ownAttrs,
  readLore,
  same,
  type Step,
  type SuiteState,
  TEST_PNG,
} from "./kit.ts";

const MISSING_ID = "zzConformanceMissing4";

const rootInfoSchema = z.object({
  noteId: z.string(),
  title: z.string(),
  shareAlias: z.string().nullable(),
  isPublished: z.boolean(),
});

/** `GET /api/share` in the front end's words; `shareRoot` is the root as `PUT` answers it. */
const shareSchema = z.looseObject({
  configured: z.boolean(),
  noteId: z.string().nullable(),
  title: z.string().nullable(),
  alias: z.string().nullable(),
  url: z.string().nullable(),
  isPublished: z.boolean(),
  conflict: z.array(rootInfoSchema),
}).transform((b) => ({
  ...b,
  shareRoot: b.configured && b.noteId !== null && b.title !== null
    ? { noteId: b.noteId, title: b.title, shareAlias: b.alias, isPublished: b.isPublished }
    : null,
}));

const putShareSchema = z.looseObject({
  shareRoot: rootInfoSchema.nullable(),
  unsharedNoteIds: z.array(z.string()),
});

const treeSchema = z.array(z.object({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable(),
  isDraft: z.boolean(),
  isGmOnly: z.boolean(),
  shareAlias: z.string().nullable(),
  isProtected: z.boolean(),
  isShared: z.boolean(),
  dateModified: z.string().nullable(),
}));

const publicNoteSchema = z.object({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable(),
  contentHtml: z.string(),
  attributes: z.array(z.object({ name: z.string(), value: z.string() })),
  resolvedRelations: z.array(z.object({
    name: z.string(),
    targetNoteId: z.string(),
    targetTitle: z.string(),
    loreType: z.string().nullable(),
  })),
  portraitImageNoteId: z.string().nullable(),
  themeSongUrl: z.string().nullable(),
  dateModified: z.string().nullable(),
});

const publicSearchSchema = z.object({
  results: z.array(z.object({
    id: z.string(),
    title: z.string(),
    score: z.number(),
    path: z.string(),
  })),
});

function alias(s: SuiteState): string {
  return `harbor-${s.tag}`;
}

/** Titles of the notes visitors must never see. */
/** A public document (sitemap, feed): 200, holding `expected`, naming no hidden note. */
function publicDocumentStep(
  path: string,
  what: string,
  expected: (s: SuiteState) => string,
): Step {
  return {
    method: "GET",
    path,
    needs: "share",
    check: `${what}, no hidden note`,
    run: async (s) => {
      const a = await s.api.call("GET", path);
      expectStatus(a, 200, path);
      check(a.text.includes(expected(s)), `${path} lacks the public note`);
      expectNoHidden(s, a.text, path);
    },
  };
}

/** Fails when `text` names a hidden suite note by id or title. */
function expectNoHidden(s: SuiteState, text: string, where: string): void {
  for (const role of ["draft", "secret", "B"]) {
    const n = noteOf(s, role);
    check(!text.includes(n.noteId) && !text.includes(n.title), `${where} names "${role}"`);
  }
}

function hiddenTitles(s: SuiteState): string[] {
  return ["draft", "secret", "B"].map((r) => noteOf(s, r).title);
}

/** The alias the draft gets before the published note links to it. */
function draftAlias(s: SuiteState): string {
  return `draft-${s.tag}`;
}

/** GM-only text added to the published note with the links to hidden notes. */
const ADDED_GM_TEXT = "Wreckers hide below the pier.";

/** GM-only text in the published note: its own since creation, and the added part. */
const GM_TEXTS = ["Smugglers meet at midnight.", ADDED_GM_TEXT];

/** Text the published note links with, unrelated to the draft it links to: it stays, unlinked. */
const UNRELATED_LINK_TEXT = "old roads";

/**
 * What the published note gets to test that hidden notes stay unnamed: a reference link to the
 * draft (Core writes the target's title as its text), a typed link whose text is the draft's
 * title, one with unrelated text, an include of the GM-only note and a GM-only part.
 */
function hiddenLinks(s: SuiteState): string {
  const draft = noteOf(s, "draft");
  const secret = noteOf(s, "secret");
  const path = `#root/${s.scratch.noteId}/${noteOf(s, "guide").noteId}/${draft.noteId}`;
  return `<p>Ask about <a class="reference-link" href="#root/${draft.noteId}">${draft.title}</a>` +
    `, <a href="${path}">${draft.title}</a> and the <a href="${path}">${UNRELATED_LINK_TEXT}</a>.` +
    `</p><section class="include-note" data-note-id="${secret.noteId}">${secret.title}</section>` +
    `<div class="gm-only"><p>${ADDED_GM_TEXT}</p></div>`;
}

/** Fails if the text names a hidden note (title, alias, id) or shows GM-only text. */
function expectNoHiddenNames(s: SuiteState, text: string, what: string): void {
  const names = [
    ...hiddenTitles(s),
    draftAlias(s),
    noteOf(s, "draft").noteId,
    noteOf(s, "secret").noteId,
    ...GM_TEXTS,
  ];
  for (const name of names) check(!text.includes(name), `${what} shows "${name}"`);
}

/** Fails unless the unrelated link text is there, as text and no longer a link. */
function expectUnrelatedTextUnlinked(html: string, what: string): void {
  check(html.includes(UNRELATED_LINK_TEXT), `${what} lost the text "${UNRELATED_LINK_TEXT}"`);
  check(
    !new RegExp(`<a\\b[^>]*\\shref=[^>]*>\\s*${UNRELATED_LINK_TEXT}`, "i").test(html),
    `${what} still links "${UNRELATED_LINK_TEXT}" to the hidden note`,
  );
}

// Every way a note can be linked (`#root/…`, Core's share URLs on any host and relative,
// `./<ref>`, `<ref>`, `api/notes/<id>`-style, image URLs), planted in the public note through
// Core, to the draft (hidden, in the share), to "B" (outside the share) and to the Guide (public).

/** Every char percent-encoded: `%61%62`. */
function encodeAll(text: string): string {
  return [...new TextEncoder().encode(text)].map((b) => `%${b.toString(16).toUpperCase()}`)
    .join("");
}

/** `[label, href]` of every form naming the note `id` (by `ref`, its alias or id, where possible). */
function linkForms(id: string, ref: string): [string, string][] {
  return [
    ["root path", `#root/${id}`],
    ["Core URL with a root path", `http://core.internal:8080/#root/${id}`],
    ["share URL", `http://core.internal:8080/share/${ref}`],
    ["share URL elsewhere", `HTTPS://Lore.Example.Org/base/share/${ref}?x=1#top`],
    ["absolute share path", `/share/${ref}`],
    ["relative share path", `share/${ref}`],
    ["parent share path", `../share/${ref}`],
    ["encoded share path", `/share/${encodeAll(ref)}`],
    ["dot ref", `./${ref}`],
    ["bare id", id],
    ["download URL", `api/notes/${id}/download`],
    ["share API URL", `/share/api/notes/${id}`],
    ["ETAPI URL", `http://core.internal:8080/etapi/notes/${id}/content`],
    ["image URL", `api/images/${id}/x.png`],
  ];
}

/**
 * Link targets of the link-form steps: `[role, label, ref, texts]`; the Guide is the public one.
 * Labels start each paragraph, so they name no note (the search must not find one by them).
 */
function linkTargets(s: SuiteState): [string, string, string, string[]][] {
  const draft = noteOf(s, "draft");
  const outside = noteOf(s, "B");
  return [
    ["draft", "H", draftAlias(s), [draft.title, "Draft", `the whole ${draft.title} story`]],
    ["B", "O", outside.noteId, [outside.title, "Brindle", `the whole ${outside.title} story`]],
    ["guide", "R", noteOf(s, "guide").noteId, ["the guide"]],
  ];
}

/** One paragraph per target, form and text: `<p>label form n: <a href>text</a></p>`. */
function linkFormsHtml(s: SuiteState): string {
  return linkTargets(s).flatMap(([role, label, ref, texts]) =>
    linkForms(noteOf(s, role).noteId, ref).flatMap(([form, href]) =>
      texts.map((text, i) => `<p>${label} ${form} ${i}: <a href="${href}">${text}</a></p>`)
    )
  ).join("");
}

/**
 * Fails unless every link-form paragraph shows what visitors may see: no text of a link to a
 * hidden or outside note (each text names it; the redaction mark stands where it was), and a
 * link to the Guide's public page.
 */
function expectLinkForms(s: SuiteState, html: string, what: string): void {
  const guide = noteOf(s, "guide").noteId;
  for (const [role, prefix, , texts] of linkTargets(s)) {
    for (const [form] of linkForms(noteOf(s, role).noteId, "")) {
      texts.forEach((text, i) => {
        const label = `${prefix} ${form} ${i}: `;
        const want = role === "guide"
          ? `<p>${label}<a href="/public/lore/${guide}">${text}</a></p>`
          : `<p>${label}${REDACTION_HTML}</p>`;
        check(html.includes(want), `${what}: "${label}" is not ${JSON.stringify(want)}`);
      });
    }
  }
}

// GM-facing fields: filled on published notes of Core's templates, with values no visitor may
// ever read; player-facing fields beside them must show.

/** A label kept private by the share root's `#sharePrivateFields`, and a relation. */
const ROOT_PRIVATE = "ruler, relRival";

/** `[role, loreType, player fields, GM-facing fields]` of the published notes the steps make. */
function fieldNotes(
  s: SuiteState,
): [string, string, Record<string, string>, Record<string, string>][] {
  const t = s.tag;
  return [
    ["gmChar", "character", { race: `Elf ${t}` }, { secrets: `Spy for the cult ${t}` }],
    ["gmSession", "session", { recap: `Reached the reef ${t}` }, {
      hooks: `The bell rings twice ${t}`,
      gmNotes: `Brannoch listens ${t}`,
    }],
    ["gmQuest", "quest", { reward: `Forty crowns ${t}` }, {
      hooks: `A drowned voice ${t}`,
      consequences: `The reef floods ${t}`,
    }],
    ["gmMyth", "myth", { origin: `Sailors' songs ${t}` }, { truthStatus: `It is true ${t}` }],
    ["gmScene", "scene", { participants: `The wreckers ${t}` }, {
      outcome: `Mira is captured ${t}`,
      gmNotes: `Use the fog ${t}`,
    }],
  ];
}

/** Values the public note gets: `[name, value, public]` (`label:mood` is the GM's own label). */
function pubFields(s: SuiteState): [string, string, boolean][] {
  const t = s.tag;
  return [
    ["region", `Lower harbour ${t}`, true],
    ["secrets", `Smugglers' tunnel ${t}`, false],
    ["ruler", `The harbourmaster ${t}`, false], // listed private on the share root
    ["label:mood", "promoted,alias=Mood,single,text", false],
    ["mood", `Restless ${t}`, false], // promoted by no known template, declared by nobody
  ];
}

/** Every GM-facing value the field steps planted. */
function gmValues(s: SuiteState): string[] {
  return [
    ...fieldNotes(s).flatMap(([, , , gm]) => Object.values(gm)),
    ...pubFields(s).filter(([name, , shown]) => !shown && name !== "label:mood").map(([, v]) => v),
  ];
}

/** Fails if the text shows a GM-facing field value. */
function expectNoGmFields(s: SuiteState, text: string, what: string): void {
  for (const value of gmValues(s)) check(!text.includes(value), `${what} shows "${value}"`);
}

/** `GET /api/share`'s answer for the Guide note as the one published root. */
function guideAsRoot(s: SuiteState) {
  const guide = noteOf(s, "guide");
  return { noteId: guide.noteId, title: guide.title, shareAlias: null, isPublished: true };
}

/** `[noteId, isPublished]` pairs by id: owners in conflict come in no particular order. */
function byNoteId(pairs: [string, boolean][]): [string, boolean][] {
  return [...pairs].sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

// What visitors get of the suite's notes while none of them is shared: nothing. Checked before
// publishing, and again while two notes claim to be the share root.

async function expectPublicNoteAbsent(s: SuiteState): Promise<void> {
  await s.api.error("GET", `/api/public/lore/${noteOf(s, "pub").noteId}`, 404, "NOT_FOUND");
  await s.api.error("GET", `/api/public/lore/${alias(s)}`, 404, "NOT_FOUND");
}

async function expectNothingFound(s: SuiteState): Promise<void> {
  const body = await s.api.json("GET", `/api/public/search?q=${s.tag}`, 200, publicSearchSchema);
  same(body.results, [], "results for the suite's term");
}

async function expectImageAbsent(s: SuiteState): Promise<void> {
  await s.api.error("GET", `/api/public/images/${factOf(s, "image")}/crest.png`, 404, "NOT_FOUND");
}

async function expectPageAbsent(s: SuiteState): Promise<void> {
  const page = html(await s.api.call("GET", `/public/lore/${alias(s)}`), 404, "page");
  check(!page.includes(s.tag), "the 404 page names the suite's note");
}

async function tree(s: SuiteState) {
  const notes = await s.api.json("GET", "/api/share/tree", 200, treeSchema);
  return { notes, byId: new Map(notes.map((n) => [n.noteId, n])) };
}

function html(a: Answer, status: number, what: string): string {
  expectStatus(a, status, what);
  check(a.headers.get("content-type")?.startsWith("text/html"), `${what} is not HTML`);
  return a.text;
}

/** `GET /api/public/lore/<alias>` of the published note: 200, its raw answer and parsed body. */
async function publicNote(s: SuiteState) {
  const answer = await s.api.call("GET", `/api/public/lore/${alias(s)}`);
  expectStatus(answer, 200, "public note");
  return { answer, note: publicNoteSchema.parse(JSON.parse(answer.text)) };
}

/** The published note's page, by alias: 200 and HTML. */
async function notePage(s: SuiteState): Promise<string> {
  return html(await s.api.call("GET", `/public/lore/${alias(s)}`), 200, "note page");
}

/** Appends `added` to the published note's content through `PUT /api/lore/:id/content`. */
async function appendToPublicNote(s: SuiteState, added: string): Promise<void> {
  const pub = noteOf(s, "pub");
  const current = await s.api.call("GET", `/api/lore/${pub.noteId}/content`);
  expectStatus(current, 200, "content of the public note");
  const put = await s.api.call("PUT", `/api/lore/${pub.noteId}/content`, {
    text: current.text + added,
  });
  same(put.status, 204, "content PUT");
}

/** Fails unless `GET /api/public/search?q=` finds nothing for `q`. */
async function expectNoPublicResults(s: SuiteState, q: string): Promise<void> {
  const body = await s.api.json(
    "GET",
    `/api/public/search?q=${encodeURIComponent(q)}`,
    200,
    publicSearchSchema,
  );
  same(body.results, [], `public results for "${q}"`);
}

/** The steps of this module, in run order. */
export const shareSteps: Step[] = [
  {
    method: "POST",
    path: "/api/lore/:id/attributes",
    check: "relations of the public note: one to a visible note, one to a GM-only note",
    run: async (s) => {
      const pub = noteOf(s, "pub");
      for (const [name, role] of [["relAlly", "guide"], ["relEnemy", "secret"]]) {
        await s.api.json("POST", `/api/lore/${pub.noteId}/attributes`, 201, attributeSchema, {
          json: { type: "relation", name, value: noteOf(s, role).noteId },
        });
      }
    },
  },
  {
    method: "GET",
    path: "/api/share",
    check: "current share root (any), none of the suite's notes a root",
    run: async (s) => {
      const body = await s.api.json("GET", "/api/share", 200, shareSchema);
      const mine = new Set([...s.notes.values()].map((n) => n.noteId));
      check(!body.shareRoot || !mine.has(body.shareRoot.noteId), "a suite note is the share root");
      s.facts.set("shareBefore", JSON.stringify(body));
    },
  },
  {
    method: "GET",
    path: "/api/share/tree",
    check: "suite notes listed with draft, GM-only and alias flags, none shared yet",
    run: async (s) => {
      const { byId } = await tree(s);
      const flags = (role: string) => {
        const n = byId.get(noteOf(s, role).noteId);
        check(n, `note "${role}" is not in the share tree`);
        return [n.isDraft, n.isGmOnly, n.shareAlias, n.isProtected, n.isShared];
      };
      same(flags("draft"), [true, false, null, false, false], "flags of the draft");
      same(flags("secret"), [false, true, null, false, false], "flags of the GM-only note");
      same(flags("pub"), [false, false, alias(s), false, false], "flags of the aliased note");
    },
  },
  {
    method: "PUT",
    path: "/api/share",
    check: "refusals change nothing: system note 400, unknown note 404, bad body 400",
    run: async (s) => {
      await s.api.error("PUT", "/api/share", 400, "INVALID_REQUEST", { json: { noteId: "root" } });
      await s.api.error("PUT", "/api/share", 404, "NOT_FOUND", { json: { noteId: MISSING_ID } });
      await s.api.error("PUT", "/api/share", 400, "INVALID_REQUEST", { json: { note: "x" } });
      const now = await s.api.json("GET", "/api/share", 200, shareSchema);
      same(JSON.stringify(now), factOf(s, "shareBefore"), "share settings after the refusals");
    },
  },
  {
    method: "GET",
    path: "/api/public/lore/:id",
    check: "an unpublished note is 404 by id and by alias",
    run: expectPublicNoteAbsent,
  },
  {
    method: "GET",
    path: "/api/public/search",
    check: "unpublished notes are never found; empty q 400",
    run: async (s) => {
      await expectNothingFound(s);
      await s.api.error("GET", "/api/public/search?q=", 400, "INVALID_REQUEST");
    },
  },
  {
    method: "GET",
    path: "/api/public/images/:id/:filename",
    check: "an unpublished image is 404",
    run: expectImageAbsent,
  },
  {
    method: "GET",
    path: "/public/lore/:id",
    check: "an unpublished note is a 404 page",
    run: expectPageAbsent,
  },
  {
    method: "GET",
    path: "/",
    check: "home page (404 without a share root, 401 behind a password) shows no suite note",
    run: async (s) => {
      const a = await s.api.call("GET", "/");
      const page = html(a, [401, 404].includes(a.status) ? a.status : 200, "home page");
      check(!page.includes(s.tag), "the home page shows an unpublished suite note");
    },
  },
  {
    method: "PUT",
    path: "/api/share",
    needs: "share",
    check: "the Guide note becomes the one share root, published",
    run: async (s) => {
      const guide = noteOf(s, "guide");
      const body = await s.api.json("PUT", "/api/share", 200, putShareSchema, {
        json: { noteId: guide.noteId },
      });
      same(body.shareRoot, guideAsRoot(s), "shareRoot");
      const now = await s.api.json("GET", "/api/share", 200, shareSchema);
      same(now.shareRoot?.noteId, guide.noteId, "share root read back");
    },
  },
  {
    method: "GET",
    path: "/api/share",
    needs: "share",
    check: "the new root, published, no other roots",
    run: async (s) => {
      const body = await s.api.json("GET", "/api/share", 200, shareSchema);
      same(body.shareRoot, guideAsRoot(s), "shareRoot");
      same(body.conflict, [], "conflict");
      check(body.url?.endsWith(`/public/lore/${guideAsRoot(s).noteId}`), "url is not its page");
    },
  },
  {
    method: "GET",
    path: "/api/share/tree",
    needs: "share",
    check: "root, public note and image shared; draft, GM-only and outside notes not",
    run: async (s) => {
      const t = await tree(s);
      const shared = (id: string) => t.byId.get(id)?.isShared;
      for (const role of ["guide", "pub"]) {
        same(shared(noteOf(s, role).noteId), true, `"${role}" shared`);
      }
      same(shared(factOf(s, "image")), true, "the image shared");
      for (const role of ["draft", "secret", "B"]) {
        same(shared(noteOf(s, role).noteId), false, `"${role}" shared`);
      }
    },
  },
  {
    method: "GET",
    path: "/api/public/lore/:id",
    needs: "share",
    check: "by id and alias: player HTML, visible relations only; hidden notes 404; ETag 304",
    run: async (s) => {
      const pub = noteOf(s, "pub");
      const guide = noteOf(s, "guide");
      const a = await s.api.call("GET", `/api/public/lore/${alias(s)}`);
      expectStatus(a, 200, "public note by alias");
      const note = publicNoteSchema.parse(JSON.parse(a.text));
      same(
        [note.noteId, note.title, note.loreType],
        [pub.noteId, pub.title, "location"],
        "public note",
      );
      check(
        note.contentHtml.includes("Harbor welcomes sailors."),
        "the visible content is missing",
      );
      check(!note.contentHtml.includes("Smugglers"), "the GM-only section is public");
      same(note.resolvedRelations.map((r) => [r.name, r.targetNoteId, r.targetTitle]), [[
        "relAlly",
        guide.noteId,
        guide.title,
      ]], "public relations");
      check(!a.text.includes(noteOf(s, "secret").noteId), "the answer names the GM-only note");
      const byId = await s.api.json("GET", `/api/public/lore/${pub.noteId}`, 200, publicNoteSchema);
      same(byId.noteId, pub.noteId, "public note by id");
      for (const role of ["draft", "secret", "B"]) {
        await s.api.error("GET", `/api/public/lore/${noteOf(s, role).noteId}`, 404, "NOT_FOUND");
      }
      const etag = a.headers.get("etag");
      check(etag, "the public note has no ETag");
      const again = await s.api.call("GET", `/api/public/lore/${alias(s)}`, {
        headers: { "if-none-match": etag },
      });
      same(again.status, 304, "revalidated public note");
    },
  },
  {
    method: "GET",
    path: "/api/public/search",
    needs: "share",
    check: "published notes found (alias as id, path from the root); hidden ones never",
    run: async (s) => {
      const guide = noteOf(s, "guide");
      const body = await s.api.json(
        "GET",
        `/api/public/search?q=${s.tag}`,
        200,
        publicSearchSchema,
      );
      const hit = body.results.find((r) => r.id === alias(s));
      same(
        hit && [hit.title, hit.path],
        [noteOf(s, "pub").title, guide.title],
        "hit for the public note",
      );
      for (const title of hiddenTitles(s)) {
        check(!body.results.some((r) => r.title === title), `"${title}" is found publicly`);
      }
      const lore = await s.api.json("GET", "/api/public/search?q=%23lore", 200, publicSearchSchema);
      check(lore.results.some((r) => r.id === alias(s)), "q=#lore does not list the public note");
    },
  },
  {
    method: "GET",
    path: "/api/public/images/:id/:filename",
    needs: "share",
    check: "the published image's bytes, public 1-day cache",
    run: async (s) => {
      const a = await s.api.call("GET", `/api/public/images/${factOf(s, "image")}/any-name.png`);
      expectStatus(a, 200, "public image");
      same(a.headers.get("content-type"), "image/png", "content type");
      check(
        a.bytes.length === TEST_PNG.length && a.bytes.every((b, i) => b === TEST_PNG[i]),
        "wrong image bytes",
      );
      same(a.headers.get("cache-control"), "public, max-age=86400", "cache-control");
    },
  },
  {
    method: "GET",
    path: "/public/types/:type",
    needs: "share",
    check: "the type page lists the public note; hidden notes absent",
    run: async (s) => {
      const page = html(await s.api.call("GET", "/public/types/location"), 200, "type page");
      check(page.includes(noteOf(s, "pub").title), "the public note is not listed");
      expectNoHidden(s, page, "the type page");
    },
  },
  {
    method: "GET",
    path: "/public/timeline",
    needs: "share",
    check: "the timeline page names no hidden note",
    run: async (s) => {
      const a = await s.api.call("GET", "/public/timeline");
      expectNoHidden(s, html(a, a.status === 404 ? 404 : 200, "timeline"), "the timeline");
    },
  },
  {
    method: "GET",
    path: "/public/card/:file",
    needs: "share",
    check: "the home page's preview card is a 1200×630 PNG; another file name is a 404 page",
    run: async (s) => {
      const home = html(await s.api.call("GET", "/"), 200, "home page");
      const url = /<meta property="og:image" content="([^"]+)"/.exec(home)?.[1];
      check(url !== undefined, "the home page names no preview image");
      const path = new URL(url!).pathname;
      check(path.startsWith("/public/card/"), `the home page's card is ${path}`);
      const a = await s.api.call("GET", path);
      expectStatus(a, 200, "the card");
      same(a.headers.get("content-type"), "image/png", "content type");
      const view = new DataView(a.bytes.buffer, a.bytes.byteOffset);
      const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
      check(signature.every((b, i) => a.bytes[i] === b), "the card is not a PNG");
      same(`${view.getUint32(16)}×${view.getUint32(20)}`, "1200×630", "the card's size");
      const other = await s.api.call("GET", "/public/card/not-the-card.png");
      expectNoHidden(s, html(other, 404, "another card"), "another card's 404");
    },
  },
  {
    method: "POST",
    path: "/public/unlock",
    needs: "share",
    check: "a wrong password: the site's own 401 page with the form again, no browser prompt",
    run: async (s) => {
      const a = await s.api.call("POST", "/public/unlock", {
        text: "user=player&password=not-it&return=%2F",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      const page = html(a, 401, "the unlock answer");
      same(a.headers.get("www-authenticate"), null, "WWW-Authenticate");
      check(/<form[^>]+action="\/public\/unlock"/.test(page), "the page has no password form");
      expectNoHidden(s, page, "the unlock page");
    },
  },
  {
    method: "GET",
    path: "/public/maps/:id",
    needs: "share",
    check: "a public note without a map image, and hidden notes, are 404 pages",
    run: async (s) => {
      for (const role of ["pub", "draft", "secret"]) {
        const page = html(
          await s.api.call("GET", `/public/maps/${noteOf(s, role).noteId}`),
          404,
          role,
        );
        expectNoHidden(s, page, `the map 404 for "${role}"`);
      }
    },
  },
  publicDocumentStep(
    "/sitemap.xml",
    "the sitemap lists the public note's page",
    (s) => `/public/lore/${alias(s)}<`,
  ),
  publicDocumentStep(
    "/public/feed.atom",
    "the feed has the public note",
    (s) => noteOf(s, "pub").title,
  ),
  {
    method: "GET",
    path: "/robots.txt",
    needs: "share",
    check: "robots.txt keeps crawlers out of the API",
    run: async (s) => {
      const a = await s.api.call("GET", "/robots.txt");
      expectStatus(a, 200, "robots.txt");
      check(a.text.includes("User-agent: *"), "robots.txt has no User-agent line");
    },
  },
  {
    method: "GET",
    path: "/",
    needs: "share",
    check: "home page: the root's content and the public note; hidden notes absent",
    run: async (s) => {
      const page = html(await s.api.call("GET", "/"), 200, "home page");
      for (const text of [noteOf(s, "guide").title, "Welcome, players.", noteOf(s, "pub").title]) {
        check(page.includes(text), `the home page lacks "${text}"`);
      }
      for (const title of hiddenTitles(s)) {
        check(!page.includes(title), `the home page shows "${title}"`);
      }
      const results = html(await s.api.call("GET", `/?q=${s.tag}`), 200, "search page");
      check(results.includes(noteOf(s, "pub").title), "the search page lacks the public note");
    },
  },
  {
    method: "GET",
    path: "/public/lore/:id",
    needs: "share",
    check: "page of the public note by alias; a draft is a 404 page",
    run: async (s) => {
      const page = await notePage(s);
      check(page.includes(noteOf(s, "pub").title), "the page lacks the title");
      check(page.includes("Harbor welcomes sailors."), "the page lacks the content");
      check(!page.includes("Smugglers"), "the page shows the GM-only section");
      const draft = html(
        await s.api.call("GET", `/public/lore/${noteOf(s, "draft").noteId}`),
        404,
        "draft page",
      );
      check(!draft.includes(noteOf(s, "draft").title), "the 404 page names the draft");
    },
  },
  {
    method: "PUT",
    path: "/api/lore/:id/content",
    needs: "share",
    check: "the public note links to the draft, includes the GM-only note, has GM text",
    run: async (s) => {
      const pub = noteOf(s, "pub");
      const draft = noteOf(s, "draft");
      await s.api.json("POST", `/api/lore/${draft.noteId}/attributes`, 201, attributeSchema, {
        json: { type: "label", name: "shareAlias", value: draftAlias(s) },
      });
      await appendToPublicNote(s, hiddenLinks(s));
      // Core's link scan ran on the PUT: the links and the include became relations
      const own = ownAttrs(await readLore(s, pub.noteId));
      for (
        const want of [
          `relation:internalLink=${draft.noteId}`,
          `relation:includeNoteLink=${noteOf(s, "secret").noteId}`,
        ]
      ) check(own.includes(want), `Core's link scan made no ${want.slice("relation:".length)}`);
    },
  },
  {
    method: "GET",
    path: "/api/public/lore/:id",
    needs: "share",
    check: "no hidden title, alias, id or GM text; unrelated link text kept unlinked",
    run: async (s) => {
      const { answer: a, note } = await publicNote(s);
      check(note.contentHtml.includes("Harbor welcomes sailors."), "the visible content is gone");
      expectNoHiddenNames(s, a.text, "the public note");
      expectUnrelatedTextUnlinked(note.contentHtml, "the public note");
      await s.api.error("GET", `/api/public/lore/${draftAlias(s)}`, 404, "NOT_FOUND");
    },
  },
  {
    method: "GET",
    path: "/api/public/search",
    needs: "share",
    check: "a hidden note's title, alias or id, or GM text, finds nothing",
    run: async (s) => {
      const draft = noteOf(s, "draft");
      const secret = noteOf(s, "secret");
      const terms = [draft.title, secret.title, draftAlias(s), draft.noteId, secret.noteId];
      for (const q of [...terms, ...GM_TEXTS]) await expectNoPublicResults(s, q);
    },
  },
  {
    method: "GET",
    path: "/public/lore/:id",
    needs: "share",
    check: "the page shows no hidden title, alias, id or GM text; unrelated text unlinked",
    run: async (s) => {
      const page = await notePage(s);
      check(page.includes("Harbor welcomes sailors."), "the page lacks the content");
      expectNoHiddenNames(s, page, "the note page");
      expectUnrelatedTextUnlinked(page, "the note page");
    },
  },
  {
    method: "GET",
    path: "/",
    needs: "share",
    check: "the home page shows no hidden title, alias, id or GM text",
    run: async (s) => {
      expectNoHiddenNames(s, html(await s.api.call("GET", "/"), 200, "home page"), "the home page");
    },
  },
  {
    method: "PUT",
    path: "/api/lore/:id/content",
    needs: "share",
    check: "the public note links to the draft, an outside note and the root in every form",
    run: (s) => appendToPublicNote(s, linkFormsHtml(s)),
  },
  {
    method: "GET",
    path: "/api/public/lore/:id",
    needs: "share",
    check: "every link form: hidden and outside notes unnamed, the root linked to its page",
    run: async (s) => {
      const { answer: a, note } = await publicNote(s);
      expectLinkForms(s, note.contentHtml, "the public note");
      expectNoHiddenNames(s, a.text, "the public note");
      expectNoHidden(s, a.text, "the public note");
    },
  },
  {
    method: "GET",
    path: "/public/lore/:id",
    needs: "share",
    check: "every link form on the page: hidden and outside notes unnamed, the root linked",
    run: async (s) => {
      const page = await notePage(s);
      expectLinkForms(s, page, "the note page");
      expectNoHiddenNames(s, page, "the note page");
      expectNoHidden(s, page, "the note page");
    },
  },
  {
    method: "GET",
    path: "/api/public/search",
    needs: "share",
    check: "the titles behind every link form, whole or in part, find nothing",
    run: async (s) => {
      const draft = noteOf(s, "draft").title;
      const outside = noteOf(s, "B").title;
      for (const q of [draft, outside, `${draft} story`, "Brindle", draftAlias(s)]) {
        await expectNoPublicResults(s, q);
        const page = html(await s.api.call("GET", `/?q=${encodeURIComponent(q)}`), 200, q);
        check(/role="status">0 results for/.test(page), `the search page finds "${q}"`);
      }
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/attributes",
    needs: "share",
    check: "GM fields on the public note; the root lists a field and a relation private",
    run: async (s) => {
      const pub = noteOf(s, "pub");
      const add = (noteId: string, type: string, name: string, value: string) =>
        s.api.json("POST", `/api/lore/${noteId}/attributes`, 201, attributeSchema, {
          json: { type, name, value },
        });
      for (const [name, value] of pubFields(s)) await add(pub.noteId, "label", name, value);
      await add(pub.noteId, "relation", "relRival", noteOf(s, "guide").noteId);
      await add(noteOf(s, "guide").noteId, "label", "sharePrivateFields", ROOT_PRIVATE);
    },
  },
  {
    method: "POST",
    path: "/api/lore",
    needs: "share",
    check: "published session, quest, myth, scene and character notes with GM fields filled",
    run: async (s) => {
      for (const [role, loreType, player, gm] of fieldNotes(s)) {
        await createLore(s, role, {
          title: `${role} ${s.tag}`,
          loreType,
          attributes: { ...player, ...gm },
          content: "<p>In brief.</p>",
        }, noteOf(s, "guide"));
      }
    },
  },
  {
    method: "GET",
    path: "/api/public/lore/:id",
    needs: "share",
    check: "GM fields never public: only player-facing attributes, no private relation",
    run: async (s) => {
      const { answer: a, note: pub } = await publicNote(s);
      same(
        pub.attributes,
        [{ name: "Region", value: `Lower harbour ${s.tag}` }],
        "attributes of the public note",
      );
      same(pub.resolvedRelations.map((r) => r.name), ["relAlly"], "relations of the public note");
      expectNoGmFields(s, a.text, "the public note");
      for (const [role, , player] of fieldNotes(s)) {
        const b = await s.api.call("GET", `/api/public/lore/${noteOf(s, role).noteId}`);
        expectStatus(b, 200, role);
        const note = publicNoteSchema.parse(JSON.parse(b.text));
        same(note.attributes.map((x) => x.value), Object.values(player), `attributes of ${role}`);
        expectNoGmFields(s, b.text, role);
      }
    },
  },
  {
    method: "GET",
    path: "/public/lore/:id",
    needs: "share",
    check: "GM fields never on a page: player-facing ones in the infobox",
    run: async (s) => {
      const notes: [string, string][] = [
        ["pub", alias(s)],
        ...fieldNotes(s).map(([role]): [string, string] => [role, noteOf(s, role).noteId]),
      ];
      for (const [role, ref] of notes) {
        const page = html(await s.api.call("GET", `/public/lore/${ref}`), 200, role);
        expectNoGmFields(s, page, `the page of ${role}`);
        check(!page.includes("Secrets") && !page.includes("GM Notes"), `${role} shows a GM label`);
      }
      const pubPage = html(await s.api.call("GET", `/public/lore/${alias(s)}`), 200, "pub");
      check(pubPage.includes(`Lower harbour ${s.tag}`), "the page lacks the public field");
    },
  },
  {
    method: "GET",
    path: "/api/share",
    needs: "share",
    check: "a second #shareRoot set in Core: a conflict listing both, no root",
    run: async (s) => {
      const rival = await createLore(s, "rival", { title: `Rival Root ${s.tag}` });
      await labelDirectly(s.core, rival.noteId, "shareRoot");
      const body = await s.api.json("GET", "/api/share", 200, shareSchema);
      same([body.configured, body.shareRoot], [false, null], "the root during the conflict");
      same(
        byNoteId(body.conflict.map((o): [string, boolean] => [o.noteId, o.isPublished])),
        byNoteId([[noteOf(s, "guide").noteId, true], [rival.noteId, false]]),
        "notes in conflict [noteId, isPublished]",
      );
    },
  },
  {
    method: "GET",
    path: "/api/share/tree",
    needs: "share",
    check: "during the conflict: both owners still listed, nothing shared",
    run: async (s) => {
      const t = await tree(s);
      for (const role of ["guide", "rival"]) {
        check(t.byId.has(noteOf(s, role).noteId), `"${role}" is not listed`);
      }
      const shared = t.notes.filter((n) => n.isShared).map((n) => n.noteId);
      same(shared, [], "notes shared during the conflict");
    },
  },
  {
    method: "GET",
    path: "/api/public/lore/:id",
    needs: "share",
    check: "during the conflict: the published note is 404 by id and by alias",
    run: expectPublicNoteAbsent,
  },
  {
    method: "GET",
    path: "/api/public/search",
    needs: "share",
    check: "during the conflict: the published notes are not found",
    run: expectNothingFound,
  },
  {
    method: "GET",
    path: "/api/public/images/:id/:filename",
    needs: "share",
    check: "during the conflict: the published image is 404",
    run: expectImageAbsent,
  },
  {
    method: "GET",
    path: "/public/lore/:id",
    needs: "share",
    check: "during the conflict: the published note is a 404 page",
    run: expectPageAbsent,
  },
  {
    method: "GET",
    path: "/",
    needs: "share",
    check: "during the conflict: the home page is a 404 naming no suite note",
    run: async (s) => {
      const page = html(await s.api.call("GET", "/"), 404, "home page");
      check(!page.includes(s.tag), "the 404 home page names a suite note");
    },
  },
  {
    method: "PUT",
    path: "/api/share",
    needs: "share",
    check: "naming the intended root ends the conflict: the other owner loses #shareRoot",
    run: async (s) => {
      const rival = noteOf(s, "rival");
      const body = await s.api.json("PUT", "/api/share", 200, putShareSchema, {
        json: { noteId: noteOf(s, "guide").noteId },
      });
      same(body.shareRoot, guideAsRoot(s), "shareRoot");
      check(body.unsharedNoteIds.includes(rival.noteId), "the other owner is not reported");
      const now = await s.api.json("GET", "/api/share", 200, shareSchema);
      same([now.shareRoot, now.conflict], [guideAsRoot(s), []], "share settings after the PUT");
      check(
        !ownAttrs(await readLore(s, rival.noteId)).includes("label:shareRoot="),
        "the other owner still has #shareRoot",
      );
      await s.api.json("GET", `/api/public/lore/${alias(s)}`, 200, publicNoteSchema);
    },
  },
  {
    method: "PUT",
    path: "/api/share",
    needs: "share",
    check: "null unshares: no root, the note is public no more",
    run: async (s) => {
      const guide = noteOf(s, "guide");
      const body = await s.api.json("PUT", "/api/share", 200, putShareSchema, {
        json: { noteId: null },
      });
      same(body.shareRoot, null, "shareRoot");
      check(body.unsharedNoteIds.includes(guide.noteId), "the Guide note is not reported unshared");
      await s.api.error("GET", `/api/public/lore/${alias(s)}`, 404, "NOT_FOUND");
    },
  },
];
