/**
 * Property test of the public side's promise: random share trees in the Core double, with links
 * in every form a note can be named by (`#root/…`, Core's share URLs on any host and relative,
 * `./<id|alias>`, `<id>`, `api/notes/<id>`-style, image URLs; percent-encoded or not, with a
 * query, a fragment or spaces around), reference links, typed links whose text is, is inside
 * of, or contains the target's title, include-note sections, image notes and image attachments
 * pointing between hidden and public notes (and at notes outside the share), `.gm-only`
 * sections, aliases, clones and inheritable flags; and lore fields as Core's templates promote
 * them: GM-facing ones (`secrets`, `gmNotes`, `hooks`, `truthStatus`, a quest's `consequences`,
 * a scene's `outcome`), fields the GM lists private on the share root or on the note, and a
 * custom promoted label nobody declared public. Every public route and page is asked for every
 * note, alias and title; no answer may contain a hidden note's id, title or alias, an
 * attachment of a hidden note, GM-only text or a GM field — not in a page's navigation,
 * breadcrumbs, backlinks, preview metadata, map (zoomed too), timeline, sitemap or feed either —
 * and the public search finds nothing by a hidden title. Where a link went with its text, the
 * page and the API show one fixed mark, byte for byte the same whatever the link named. A naive
 * reference decides what is hidden.
 *
 * The timeline's surfaces too: events dated as the world writes them (`#shareDateLabel`), placed
 * (`~relLocatedIn`) and under timeline notes (its eras); every public event is on it with its own
 * date and exactly its visible places.
 *
 * Preview cards: a page without a picture of its own shows the world's card, which is the
 * picture of the share root's visible title, byte for byte.
 */
import assert from "node:assert/strict";
import { REDACTION_HTML } from "../../src/sanitize/redaction.ts";
import { worldCard } from "../../src/site/world_card.ts";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { CHART_PNG, markLore, W } from "../../sims/world.ts";
import { prng, propertySeed } from "../helpers/prng.ts";

type Rng = () => number;

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)];
const token = (rng: Rng, n = 8) =>
  Array.from({ length: n }, () => pick(rng, [..."bcdfghjkmnpqrstvwxz"])).join("");

/** Prose the writer typed: never part of a generated title, alias or id. */
const PROSE = ["rumours", "the tide", "lanterns", "old roads", "salt", "harbour songs"];

/** Lore types planted, with the fields their templates promote (see `fieldsOf`). */
const KINDS = [
  "location",
  "event",
  "character",
  "faction",
  "session",
  "quest",
  "myth",
  "scene",
] as const;
/** A planted note's lore type: one of {@linkcode KINDS}, or an era (see `addEras`). */
type Kind = typeof KINDS[number] | "timeline";

/** Where a field's value may show: everywhere public, or nowhere. */
type FieldRole = "player" | "gm" | "private" | "custom";

/**
 * The fields planted on a note of each kind, and what the policy must make of them: `player`
 * values show on the public note, `gm` (GM-facing), `private` (listed in `#sharePrivateFields`)
 * and `custom` (an undeclared promoted label) never show anywhere.
 */
const FIELDS: Record<Kind, [name: string, role: FieldRole][]> = {
  location: [["region", "player"], ["secrets", "gm"]],
  event: [["outcome", "player"], ["consequences", "player"], ["secrets", "gm"]],
  timeline: [["calendarSystem", "player"]],
  character: [["race", "player"], ["secrets", "gm"], ["goals", "private"]], // root: "Goals"
  faction: [["leader", "player"], ["secrets", "gm"], ["goals", "private"]],
  session: [["recap", "player"], ["hooks", "gm"], ["gmNotes", "gm"], ["players", "custom"]],
  quest: [["reward", "player"], ["hooks", "gm"], ["consequences", "gm"]],
  myth: [["origin", "player"], ["truthStatus", "gm"]],
  scene: [["participants", "player"], ["outcome", "gm"], ["gmNotes", "gm"]],
};

/** Root labels of every round: a field and a relation kept private, a custom label published. */
const ROOT_PRIVATE_FIELDS = "Goals, relRival";
const ROOT_PUBLIC_FIELDS = "banner";

/** Hosts a writer's Core share URL may name (the Core double's own is one more). */
const CORE_HOSTS = ["core.internal:8080", "lore.example.org", "127.0.0.1:8088"];

interface PlantedField {
  name: string;
  value: string;
  role: FieldRole;
  /** Promoted by the note's own definition rather than a template. */
  ownDefinition?: string;
}

interface GenNote {
  id: string;
  title: string;
  alias: string | null;
  type: "text" | "image";
  parents: number[]; // indexes of earlier notes; [] for the root
  flag: "draft" | "gmOnly" | null;
  inheritable: boolean;
  attachment: { id: string; title: string } | null;
  /** Lore type; a location's template promotes `geolocation`, an event's `inWorldDate`. */
  kind: Kind;
  /** Index of a note this one draws as its map (`~mapImage`). */
  mapImage: number | null;
  fields: PlantedField[];
  /** `#sharePrivateFields` of the note itself (its region). */
  ownPrivate: boolean;
  /** An event's `#shareDateLabel`. */
  dateLabel: string | null;
  /** Index of the note an event's `~relLocatedIn` names. */
  place: number | null;
}

/** A link from a public note's content to a public note: its page must be linked. */
interface ExpectedLink {
  from: string;
  page: string;
}

interface World {
  notes: GenNote[];
  outside: GenNote[];
  secrets: string[];
  content: Map<string, string>;
  links: { from: string; to: GenNote }[];
  /** Relations of characters and factions to any note, hidden, outside or public. */
  relations: { from: GenNote; name: string; to: GenNote }[];
}

/** Field values: `PUBF…` where visitors see them, `GMF…` where they never may. */
const fieldValue = (rng: Rng, role: FieldRole) =>
  `${role === "player" ? "PUBF" : "GMF"}${token(rng)}`;

function fieldsOf(rng: Rng, kind: Kind, ownPrivate: boolean): PlantedField[] {
  const out: PlantedField[] = FIELDS[kind].map(([name, planned]) => {
    const role = name === "region" && ownPrivate ? "private" : planned;
    return { name, role, value: fieldValue(rng, role) };
  });
  // a promoted label of the GM's own: hidden unless declared public (the root declares banner)
  if (rng() < 0.4) {
    out.push({
      name: "mood",
      role: "custom",
      value: fieldValue(rng, "custom"),
      ownDefinition: "Mood",
    });
  }
  if (rng() < 0.4) {
    out.push({
      name: "banner",
      role: "player",
      value: fieldValue(rng, "player"),
      ownDefinition: "Banner",
    });
  }
  return out;
}

/** Every char percent-encoded: `%61%62`. */
const encodeAll = (text: string) =>
  [...new TextEncoder().encode(text)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");

/** A link to `target` in one of the forms a note can be named by. */
function hrefFor(rng: Rng, target: GenNote): string {
  const byAlias = target.alias !== null && rng() < 0.5;
  const plain = byAlias ? target.alias! : target.id;
  const ref = rng() < 0.25 ? encodeAll(plain) : plain;
  const id = rng() < 0.2 ? encodeAll(target.id) : target.id;
  const host = pick(rng, CORE_HOSTS);
  const scheme = pick(rng, ["http", "https", "HTTP", "Https"]);
  const tail = rng() < 0.3 ? pick(rng, ["?v=2", "#top", "?x=1&y=2#part"]) : "";
  const forms: (() => string)[] = [
    () => `#root/${target.id}`,
    () => `#root/${W.loreRoot}/${target.id}?viewMode=default`,
    () => `${scheme}://${host}/share/${ref}${tail}`,
    () => `${scheme}://${host}/#root/${target.id}`,
    () => `/share/${ref}${tail}`,
    () => `share/${ref}${tail}`,
    () => `../share/${ref}${tail}`,
    () => `./${ref}${tail}`,
    () => `${ref}${tail}`,
    () => `api/notes/${id}/download`,
    () => `/share/api/notes/${id}${tail}`,
    () => `${scheme}://${host}/etapi/notes/${id}/content`,
    () => `api/images/${id}/${encodeURIComponent(target.title)}${tail}`,
  ];
  const href = pick(rng, forms)();
  return rng() < 0.15 ? ` ${href}\n` : href;
}

/** An image of `target` in one of the forms an image can be named by. */
function imageSrcFor(rng: Rng, target: GenNote): string {
  const file = encodeURIComponent(target.title);
  return pick(rng, [
    `api/images/${target.id}/${file}`,
    `/share/api/images/${target.id}/${file}?123`,
    `${pick(rng, CORE_HOSTS.map((h) => `http://${h}`))}/api/images/${target.id}/${file}`,
    `../share/api/images/${encodeAll(target.id)}/${file}`,
  ]);
}

function generate(rng: Rng, round: number, side: Rng): World {
  const count = 6 + Math.floor(rng() * 10);
  const notes: GenNote[] = [];
  for (let i = 0; i < count; i++) {
    const parents = i === 0 ? [] : [Math.floor(rng() * i)];
    if (i > 1 && rng() < 0.2) parents.push(Math.floor(rng() * i)); // a clone
    const flag = i === 0 ? null : rng() < 0.2 ? "draft" : rng() < 0.15 ? "gmOnly" : null;
    const type = i > 0 && rng() < 0.2 ? "image" : "text";
    // places and dated events most often: the map and timeline pages draw them
    const kind = rng() < 0.6 ? pick(rng, ["location", "event"] as const) : pick(rng, KINDS);
    // the share root's own list is the whole share's (the model keeps region private to its
    // owner), so only other notes list it for themselves
    const ownPrivate = kind === "location" && rng() < 0.3 && i > 0;
    notes.push({
      id: `p${round}n${i}${token(rng, 6)}`,
      title: `Ttl${token(rng)} ${token(rng, 5)}${type === "image" ? ".png" : ""}`,
      alias: rng() < 0.3 ? `als-${token(rng)}` : null,
      type,
      parents: [...new Set(parents)],
      flag,
      inheritable: rng() < 0.5,
      attachment: type === "text" && rng() < 0.3
        ? { id: `p${round}a${i}${token(rng, 6)}`, title: `Att${token(rng)}.png` }
        : null,
      kind,
      mapImage: i > 0 && rng() < 0.4 ? Math.floor(rng() * i) : null,
      fields: type === "text" ? fieldsOf(rng, kind, ownPrivate) : [],
      ownPrivate,
      dateLabel: null,
      place: null,
    });
  }
  const outside: GenNote[] = [0, 1].map((k) => ({
    id: `p${round}o${k}${token(rng, 6)}`,
    title: `Out${token(rng)} ${token(rng, 5)}`,
    alias: rng() < 0.5 ? `als-${token(rng)}` : null,
    type: "text",
    parents: [],
    flag: null,
    inheritable: false,
    attachment: null,
    kind: "location",
    mapImage: null,
    fields: [],
    ownPrivate: false,
    dateLabel: null,
    place: null,
  }));
  const all = [...notes, ...outside];
  // a character's kin and enemies, a faction it belongs to: their pages draw the ones a visitor
  // may see as a diagram
  const relations: World["relations"] = notes
    .filter((n) => n.type === "text" && (n.kind === "character" || n.kind === "faction"))
    .flatMap((n) =>
      ["relKin", "relEnemy", "relMemberOf"].map((name) => ({ from: n, name, to: pick(rng, all) }))
    );
  const secrets: string[] = [];
  const content = new Map<string, string>();
  const links: World["links"] = [];
  for (const note of [...notes.filter((n) => n.type === "text"), ...outside]) {
    const parts: string[] = [`<p>${pick(rng, PROSE)} and ${pick(rng, PROSE)}.</p>`];
    for (let k = 0; k < 6; k++) {
      const target = pick(rng, all);
      const href = hrefFor(rng, target);
      const link = (text: string, cls = "") => {
        links.push({ from: note.id, to: target });
        return `<a${cls && ` class="${cls}"`} href="${href}">${text}</a>`;
      };
      switch (Math.floor(rng() * 10)) {
        case 0:
          parts.push(`<p>${link(target.title, "reference-link")}</p>`);
          break;
        case 1: // the writer typed the target's title
          parts.push(`<p>See ${link(target.title)} now.</p>`);
          break;
        case 2: // the writer typed something else
          parts.push(`<p>About ${link(pick(rng, PROSE))}.</p>`);
          break;
        case 3: // part of the title
          parts.push(`<p>The ${link(target.title.split(" ")[0])} affair.</p>`);
          break;
        case 4: // the title inside other words
          parts.push(`<p>${link(`the whole ${target.title} story`)}.</p>`);
          break;
        case 5: // the URL itself as the text
          parts.push(`<p>${link(href.trim())}</p>`);
          break;
        case 6:
          parts.push(
            `<section class="include-note" data-note-id="${target.id}" data-box-size="small">` +
              `<p>${target.title}</p></section>`,
          );
          break;
        case 7:
          parts.push(`<p><img src="${imageSrcFor(rng, target)}" alt="${target.title}"></p>`);
          break;
        case 8: {
          const owner = pick(rng, notes.filter((n) => n.attachment));
          if (owner?.attachment) {
            const a = owner.attachment;
            parts.push(`<p><img src="api/attachments/${a.id}/image/${a.title}"></p>`);
          }
          break;
        }
        default: {
          const secret = `GMSECRET${token(rng)}`;
          secrets.push(secret);
          parts.push(`<div class="gm-only"><p>${secret} about ${target.title}</p></div>`);
        }
      }
    }
    content.set(note.id, parts.join("\n"));
  }
  addEras(side, round, notes, content);
  return { notes, outside, secrets, content, links, relations };
}

/**
 * Appends two eras (timeline notes, under the root or any note, so at times hidden) with events
 * under them (some cloned elsewhere) to a round's notes, and gives every event a written date
 * and a place at random. Drawn from `side`, so the rest of the round is what the main stream
 * makes it.
 */
function addEras(side: Rng, round: number, notes: GenNote[], content: Map<string, string>) {
  const first = notes.length;
  const add = (kind: Kind, parents: number[]) => {
    const note: GenNote = {
      id: `p${round}n${notes.length}${token(side, 6)}`,
      title: `Ttl${token(side)} ${token(side, 5)}`,
      alias: side() < 0.3 ? `als-${token(side)}` : null,
      type: "text",
      parents,
      flag: side() < 0.15 ? pick(side, ["draft", "gmOnly"] as const) : null,
      inheritable: side() < 0.5,
      attachment: null,
      kind,
      mapImage: null,
      fields: fieldsOf(side, kind, false),
      ownPrivate: false,
      dateLabel: null,
      place: null,
    };
    notes.push(note);
    content.set(note.id, `<p>${pick(side, PROSE)}.</p>`);
  };
  for (let k = 0; k < 2; k++) add("timeline", [side() < 0.5 ? 0 : Math.floor(side() * first)]);
  for (let k = 0; k < 6; k++) {
    add("event", [first + k % 2, ...(side() < 0.3 ? [Math.floor(side() * first)] : [])]);
  }
  for (const n of notes.filter((n) => n.kind === "event")) {
    n.dateLabel = side() < 0.6 ? `Dtl${token(side)}` : null;
    n.place = side() < 0.8 ? Math.floor(side() * notes.length) : null;
  }
}

/** The `#inWorldDate` of the event at index `i`. */
const inWorldDate = (i: number) => `11${i}-0${1 + (i % 9)}-1${i % 10}`;

/** Naive reference: public iff not flagged and every parent is public (parents come first). */
function publicIds(world: World): Set<string> {
  const pub = new Set<string>();
  for (const [i, n] of world.notes.entries()) {
    if (n.flag === null && (i === 0 || n.parents.every((p) => pub.has(world.notes[p].id)))) {
      pub.add(n.id);
    }
  }
  return pub;
}

function plant(h: Harness, world: World): void {
  const store = h.core.store;
  const [root] = world.notes;
  const label = (noteId: string, name: string, value = "", isInheritable = false) =>
    store.createAttribute({ noteId, type: "label", name, value, isInheritable });
  for (const [i, n] of world.notes.entries()) {
    const parent = i === 0 ? W.loreRoot : world.notes[n.parents[0]].id;
    store.createNote({
      noteId: n.id,
      parentNoteId: parent,
      title: n.title,
      type: n.type,
      mime: n.type === "image" ? "image/png" : "text/html",
      content: n.type === "image" ? CHART_PNG : "",
    }, { rawTitle: true });
    for (const extra of n.parents.slice(1)) {
      store.createBranch({ noteId: n.id, parentNoteId: world.notes[extra].id });
    }
    if (n.type !== "text") label(n.id, "lore"); // an image: lore of no type
    else {
      markLore(store, n.id, n.kind);
      // dated events and pinned places: the timeline and map pages draw them
      if (n.kind === "event") label(n.id, "inWorldDate", inWorldDate(i));
      if (n.dateLabel) label(n.id, "shareDateLabel", n.dateLabel);
      if (n.kind === "location") label(n.id, "geolocation", `${(i * 7) % 64}, ${(i * 5) % 48}`);
      for (const f of n.fields) {
        if (f.ownDefinition) {
          label(n.id, `label:${f.name}`, `promoted,alias=${f.ownDefinition},single,text`);
        }
        label(n.id, f.name, f.value);
      }
      if (n.ownPrivate) label(n.id, "sharePrivateFields", "region");
    }
    if (n.alias) label(n.id, "shareAlias", n.alias);
    if (n.flag) label(n.id, n.flag, "", n.inheritable);
    if (n.attachment) {
      store.createAttachment({
        attachmentId: n.attachment.id,
        ownerId: n.id,
        role: "image",
        mime: "image/png",
        title: n.attachment.title,
        content: CHART_PNG,
      });
    }
  }
  for (const n of world.notes) {
    if (n.type !== "text") continue;
    if (n.mapImage !== null) {
      const value = world.notes[n.mapImage].id;
      store.createAttribute({ noteId: n.id, type: "relation", name: "mapImage", value });
    }
    // a relation shown to visitors, and one the share root keeps private
    for (const name of ["relAlly", "relRival"]) {
      const value = world.notes[(world.notes.indexOf(n) + 1) % world.notes.length].id;
      store.createAttribute({ noteId: n.id, type: "relation", name, value });
    }
    if (n.place !== null) {
      const value = world.notes[n.place].id;
      store.createAttribute({ noteId: n.id, type: "relation", name: "relLocatedIn", value });
    }
  }
  for (const n of world.outside) {
    store.createNote({
      noteId: n.id,
      parentNoteId: W.loreRoot,
      title: n.title,
      type: "text",
      mime: "text/html",
      content: "",
    }, { rawTitle: true });
    if (n.alias) label(n.id, "shareAlias", n.alias);
  }
  // after the notes outside the share, which some name
  for (const r of world.relations) {
    store.createAttribute({ noteId: r.from.id, type: "relation", name: r.name, value: r.to.id });
  }
  for (const [id, html] of world.content) store.setNoteContent(id, html);
  store.createBranch({ noteId: root.id, parentNoteId: "_share" });
  label(root.id, "shareRoot");
  label(root.id, "sharePrivateFields", ROOT_PRIVATE_FIELDS);
  label(root.id, "sharePublicFields", ROOT_PUBLIC_FIELDS);
}

/** The previous round's share root stops being one (one root at a time). */
function unshare(h: Harness, rootId: string): void {
  for (const a of h.core.store.ownAttributes(rootId)) {
    if (a.name === "shareRoot") h.core.store.deleteAttribute(a.attributeId);
  }
}

/** The public URL id of a generated note. */
const refOf = (n: GenNote) => n.alias ?? n.id;

/**
 * Checks the timeline page: every public event is on it with its own date (its
 * `#shareDateLabel`, else its `#inWorldDate`), placed at exactly the public location notes it
 * relates to (the share root keeps `relRival` private). Counts what it showed.
 */
function timelineEntries(world: World, pub: Set<string>, text: string, where: string) {
  let labels = 0;
  let placed = 0;
  world.notes.forEach((n, i) => {
    if (n.kind !== "event" || n.type !== "text" || !pub.has(n.id)) return;
    const date = n.dateLabel ?? inWorldDate(i);
    const head = `<time>${date}</time> <a href="/public/lore/${refOf(n)}">`;
    const at = text.indexOf(head);
    assert.ok(at >= 0, `${where}: the timeline lacks ${n.id} on ${date}`);
    const entry = text.slice(at, text.indexOf("</li>", at));
    const places = /<p class="meta">Where: (.*?)<\/p>/.exec(entry)?.[1] ?? "";
    const shown = new Set([...places.matchAll(/href="([^"]*)"/g)].map((m) => m[1]));
    const related = [world.notes[(i + 1) % world.notes.length], world.notes[n.place ?? i]];
    const expected = new Set(
      related.filter((t) => t !== n && t.kind === "location" && t.type === "text" && pub.has(t.id))
        .map((t) => `/public/lore/${refOf(t)}`),
    );
    assert.deepEqual(shown, expected, `${where}: the places of ${n.id}`);
    if (n.dateLabel) labels++;
    if (expected.size > 0) placed++;
  });
  return { labels, placed, eras: text.match(/<h2 id="timeline-\d+"><a /g)?.length ?? 0 };
}

/**
 * Checks the relationship diagram of a public page (`ref` names its note): drawn for a public
 * character or faction with a visible related note, its nodes exactly the public notes (not
 * images) it holds a relation to and those that hold one to it — every relation planted in Core
 * but the one the share root keeps private — up to the cap. Says whether it was drawn, and
 * whether beside a relation to or from a note the visitor may not see.
 */
function checkDiagram(
  h: Harness,
  world: World,
  pub: Set<string>,
  ref: string,
  text: string,
  where: string,
): { drawn: boolean; besideHidden: boolean } {
  const byRef = new Map(
    [...world.notes, ...world.outside].flatMap((n) => [[n.id, n], [refOf(n), n]]),
  );
  const note = byRef.get(ref)!;
  const planted = world.notes.flatMap((n) =>
    h.core.store.ownAttributes(n.id)
      .filter((a) => a.type === "relation" && a.name !== "template")
      .map((a) => ({ from: n.id, name: a.name, to: a.value }))
  ).filter((r) => r.from !== r.to && (r.from === note.id || r.to === note.id));
  const shown = planted.filter((r) => r.name !== "relRival" && pub.has(r.from) && pub.has(r.to))
    .map((r) => r.from === note.id ? r.to : r.from)
    .filter((id) => byRef.get(id)?.type === "text");
  const expected = new Set(shown);
  const svg = /<svg class="diagram"[\s\S]*?(?=<ul class="links" id="related-list">)/.exec(text)
    ?.[0];
  const drawable = note.type === "text" && ["character", "faction"].includes(note.kind);
  assert.equal(!!svg, drawable && expected.size > 0, `${where}: a diagram or none`);
  if (!svg) return { drawn: false, besideHidden: false };
  const nodes = [...svg.matchAll(/<a href="\/public\/lore\/([^"]*)"><title>/g)]
    .map(([, r]) => byRef.get(decodeURIComponent(r))?.id);
  const capped = expected.size > 12;
  assert.equal(nodes.length, capped ? 11 : expected.size, `${where}: the diagram's nodes`);
  assert.ok(nodes.every((id) => id && expected.has(id)), `${where}: ${nodes} drawn`);
  assert.equal(svg.includes('href="#related-list"'), capped, `${where}: "and N more"`);
  assert.ok(!svg.includes("Rival"), `${where}: a private relation drawn`);
  const besideHidden = planted.some((r) => !pub.has(r.from) || !pub.has(r.to));
  return { drawn: true, besideHidden };
}

/** Percent-encoded runs decoded where they are valid UTF-8. */
function percentDecoded(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

function decoded(text: string): string {
  return percentDecoded(text)
    .replace(/\\u([0-9a-f]{4})/gi, (_, x) => String.fromCharCode(parseInt(x, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_, x) => String.fromCodePoint(parseInt(x, 16)))
    .replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

const ROUNDS = 16;

const publicNoteShape = (body: unknown) =>
  body as {
    contentHtml: string;
    attributes: { name: string; value: string }[];
    resolvedRelations: { name: string }[];
  };

/** Public caches keep a round's answers; each round starts past their age (a new world). */
const CACHE_MS = 600_000;

Deno.test("property: no public answer names a hidden note or shows GM-only text or fields", () => {
  const clock = { now: 1_000_000 };
  return withHarness(async (h) => {
    // The sample world's own share root steps aside; each round publishes its own tree.
    unshare(h, W.guide);
    const seed = propertySeed(20261123);
    const rng = prng(seed);
    const side = prng(seed + 1); // the eras' own stream (addEras)
    let previousRoot: string | null = null;
    let publicPages = 0;
    let keptTypedLinks = 0;
    let redactions = 0;
    let drawnMaps = 0;
    let datedEntries = 0;
    let datedLabels = 0;
    let placedEvents = 0;
    let eraHeadings = 0;
    let linkedPublicPages = 0;
    let shownFields = 0;
    let shownRelations = 0;
    let drawnDiagrams = 0;
    let diagramsBesideHidden = 0;
    for (let round = 0; round < ROUNDS; round++) {
      clock.now += 2 * CACHE_MS; // nothing kept from the last round's world answers this one
      const world = generate(rng, round, side);
      if (previousRoot) unshare(h, previousRoot);
      plant(h, world);
      previousRoot = world.notes[0].id;
      const pub = publicIds(world);
      const hidden = [...world.notes.filter((n) => !pub.has(n.id)), ...world.outside];
      const markers = [
        ...world.secrets,
        ...hidden.flatMap((n) => [n.id, n.title, ...(n.alias ? [n.alias] : [])]),
        ...hidden.flatMap((n) => n.attachment ? [n.attachment.id, n.attachment.title] : []),
        ...hidden.flatMap((n) => n.dateLabel ? [n.dateLabel] : []),
        // hidden titles as they would show when made URL-safe for an image file name
        ...hidden.map((n) => n.title.replace(/[^A-Za-z0-9._]+/g, "-")),
        // every field of a hidden note, and every field no visitor may see on any note
        ...world.notes.flatMap((n) =>
          n.fields.filter((f) => f.role !== "player" || !pub.has(n.id)).map((f) => f.value)
        ),
      ];
      // typed text inside a hidden title (its first word): not echoed by the search page only
      const partials = hidden.map((n) => n.title.split(" ")[0]);
      const refs = [...world.notes, ...world.outside].flatMap((n) => [n.id, n.alias ?? n.id]);
      const hiddenQueries = [
        ...hidden.flatMap((n) => [n.title, n.title.split(" ")[0], n.alias ?? n.id]),
        ...world.notes.flatMap((n) => n.fields.filter((f) => f.role !== "player"))
          .map((f) => f.value),
      ];
      const paths = [
        "/",
        "/?q=rumours",
        "/sitemap.xml",
        "/public/feed.atom",
        "/public/timeline",
        "/public/types/timeline",
        ...KINDS.map((k) => `/public/types/${k}`),
        ...refs.flatMap((ref) => [
          `/api/public/lore/${encodeURIComponent(ref)}`,
          `/public/lore/${encodeURIComponent(ref)}`,
          `/public/maps/${encodeURIComponent(ref)}`,
          // a zoomed view draws its pins from the same visible children
          `/public/maps/${encodeURIComponent(ref)}?zoom=full`,
        ]),
        ...[...world.notes, ...world.outside].map((n) => `/api/public/images/${n.id}/x.png`),
        ...world.notes.flatMap((n) =>
          n.attachment ? [`/api/public/images/${n.attachment.id}/x`] : []
        ),
        ...["#lore", ...PROSE, ...hiddenQueries]
          .map((q) => `/api/public/search?q=${encodeURIComponent(q)}`),
        ...hiddenQueries.map((q) => `/?q=${encodeURIComponent(q)}`),
      ];
      const cards = new Set<string>();
      for (const path of paths) {
        const res = await h.request(path);
        const isImage = res.headers.get("content-type")?.startsWith("image/");
        const text = isImage ? "" : await res.text();
        if (isImage) await res.body?.cancel();
        assert.ok(
          [200, 404].includes(res.status),
          `seed ${seed} round ${round} ${path}: ${res.status}`,
        );
        const all = text + [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n");
        const plain = decoded(all);
        const echoes = path.startsWith("/?q=");
        // the search page repeats the query it was asked: that is not a leak
        const echoed = echoes ? decodeURIComponent(path.slice("/?q=".length)) : "";
        for (const m of [...markers, ...partials]) {
          if (echoes && echoed.includes(m)) continue;
          assert.ok(
            !all.includes(m) && !plain.includes(m),
            `seed ${seed} round ${round}: ${path} reveals ${JSON.stringify(m)}`,
          );
        }
        const card = /<meta property="og:image" content="[^"]*(\/public\/card\/[^"]+)">/.exec(text);
        if (card) cards.add(card[1]);
        const query = path.startsWith("/api/public/search?q=")
          ? decodeURIComponent(path.slice("/api/public/search?q=".length))
          : null;
        if (query !== null && hiddenQueries.includes(query)) {
          assert.deepEqual(JSON.parse(text).results, [], `seed ${seed} round ${round}: ${path}`);
        }
        if (echoes && path !== "/?q=rumours") {
          assert.match(text, /role="status">0 results for/, `seed ${seed} round ${round}: ${path}`);
        }
        // a redaction mark says nothing of what went: every one is the same bytes
        const marks = text.split('class="redacted"').length - 1;
        if (path.startsWith("/public/lore/") && marks > 0) {
          assert.equal(
            text.split(REDACTION_HTML).length - 1,
            marks,
            `seed ${seed} round ${round}: ${path} has a mark of its own`,
          );
          redactions += marks;
        }
        if (path.startsWith("/public/maps/") && res.status === 200) drawnMaps++;
        if (path.startsWith("/public/lore/") && res.status === 200) {
          const ref = decodeURIComponent(path.slice("/public/lore/".length));
          const diagram = checkDiagram(h, world, pub, ref, text, `seed ${seed} round ${round}`);
          if (diagram.drawn) drawnDiagrams++;
          if (diagram.besideHidden) diagramsBesideHidden++;
        }
        if (path === "/public/timeline") {
          datedEntries += text.match(/<time>/g)?.length ?? 0;
          const shown = timelineEntries(world, pub, text, `seed ${seed} round ${round}`);
          [datedLabels, placedEvents, eraHeadings] = [
            datedLabels + shown.labels,
            placedEvents + shown.placed,
            eraHeadings + shown.eras,
          ];
        }
        if (path.startsWith("/api/public/lore/") && res.status === 200) {
          publicPages++;
          if (/<a>(?:rumours|the tide|lanterns|old roads|salt|harbour songs)<\/a>/.test(plain)) {
            keptTypedLinks++;
          }
        }
      }
      // The world's card is the picture of the root's visible title, byte for byte: pixels can
      // name no hidden note. Pages without a picture of their own (the home page) all show it.
      assert.equal(cards.size, 1, `seed ${seed} round ${round}: cards ${[...cards]}`);
      const card = await h.request([...cards][0]);
      assert.deepEqual(
        new Uint8Array(await card.arrayBuffer()),
        worldCard(world.notes[0].title).png,
        `seed ${seed} round ${round}: the world's card`,
      );
      // The site's password form answers alike whatever page it would return to (hidden,
      // missing or public), and shows nothing of it but the address the visitor sent.
      const unlockPages = new Set<string>();
      for (const ref of refs) {
        const returnTo = `/public/lore/${encodeURIComponent(ref)}`;
        const res = await h.request("/public/unlock", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ user: ref, password: "wrong", return: returnTo }).toString(),
        });
        const form = (await res.text()).replace(/ value="[^"]*"/g, "");
        assert.equal(res.status, 401, `seed ${seed} round ${round}: unlock ${returnTo}`);
        for (const m of [...markers, ...partials]) {
          assert.ok(
            !form.includes(m) && !decoded(form).includes(m),
            `seed ${seed} round ${round}: unlock ${returnTo} reveals ${JSON.stringify(m)}`,
          );
        }
        unlockPages.add(form);
      }
      assert.equal(unlockPages.size, 1, `seed ${seed} round ${round}: the password form differs`);
      // Public notes answer: the property is not met by hiding everything. Each shows its
      // player-facing fields, links every public note it names to that note's page, and keeps
      // the relation the share root lists private to itself.
      const expected: ExpectedLink[] = world.links
        .filter((l) => pub.has(l.from) && pub.has(l.to.id))
        .map((l) => ({ from: l.from, page: `/public/lore/${l.to.alias ?? l.to.id}` }));
      for (const note of world.notes.filter((n) => pub.has(n.id))) {
        const res = await h.request(`/api/public/lore/${note.id}`);
        assert.equal(res.status, 200, `seed ${seed} round ${round}: public ${note.id}`);
        const body = publicNoteShape(await res.json());
        assert.equal(
          body.contentHtml.split(REDACTION_HTML).length,
          body.contentHtml.split('class="redacted"').length,
          `seed ${seed} round ${round}: ${note.id} has a mark of its own`,
        );
        for (const f of note.fields.filter((f) => f.role === "player")) {
          assert.ok(
            body.attributes.some((a) => a.value === f.value),
            `seed ${seed} round ${round}: ${note.id} lacks its ${f.name}`,
          );
          shownFields++;
        }
        for (const link of expected.filter((l) => l.from === note.id)) {
          assert.ok(
            body.contentHtml.includes(`href="${link.page}"`),
            `seed ${seed} round ${round}: ${note.id} does not link ${link.page}`,
          );
          linkedPublicPages++;
        }
        const names = body.resolvedRelations.map((r) => r.name);
        assert.ok(!names.includes("relRival"), `seed ${seed} round ${round}: relRival shown`);
        if (names.includes("relAlly")) shownRelations++;
      }
    }
    assert.ok(publicPages > ROUNDS, `only ${publicPages} public pages`);
    // Links to hidden notes inside the share whose typed text cannot name the target keep the
    // text (unlinked); links to notes outside the share and Core's bare `./<ref>` links lose it.
    assert.ok(keptTypedLinks > 0, "typed text of links to hidden notes should stay");
    assert.ok(redactions > ROUNDS, `only ${redactions} links left the mark where they went`);
    assert.ok(linkedPublicPages > ROUNDS, `only ${linkedPublicPages} links to public pages`);
    assert.ok(shownFields > ROUNDS, `only ${shownFields} player-facing fields shown`);
    assert.ok(shownRelations > 0, "no relation was shown");
    // the site's cross-note pages were drawn, not just refused
    assert.ok(drawnMaps > 0, "no map page was drawn");
    assert.ok(drawnDiagrams > 0, "no relationship diagram was drawn");
    assert.ok(diagramsBesideHidden > 0, "no diagram was drawn beside a hidden related note");
    assert.ok(datedEntries > 0, "no timeline entry was shown");
    assert.ok(datedLabels > 0, "no date as the world writes it was shown");
    assert.ok(placedEvents > 0, "no timeline entry showed a place");
    assert.ok(eraHeadings > 0, "no era headed the timeline");
  }, {
    // every round posts the password form once per note: never rate-limited here
    env: { PUBLIC_CACHE_MS: String(CACHE_MS), AUTH_RATE_LIMIT: "10000" },
    now: () => clock.now,
  });
});
