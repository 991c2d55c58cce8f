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
 * breadcrumbs, backlinks, preview metadata, map, timeline, sitemap or feed either — and the
 * public search finds nothing by a hidden title. A naive reference decides what is hidden.
 */
import assert from "node:assert/strict";
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
const KINDS = ["location", "event", "character", "session", "quest", "myth", "scene"] as const;
type Kind = typeof KINDS[number];

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
  character: [["race", "player"], ["secrets", "gm"], ["goals", "private"]], // root: "Goals"
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

function generate(rng: Rng, round: number): World {
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
  }));
  const all = [...notes, ...outside];
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
  return { notes, outside, secrets, content, links };
}

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
      if (n.kind === "event") label(n.id, "inWorldDate", `11${i}-0${1 + (i % 9)}-1${i % 10}`);
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
    let previousRoot: string | null = null;
    let publicPages = 0;
    let keptTypedLinks = 0;
    let drawnMaps = 0;
    let datedEntries = 0;
    let linkedPublicPages = 0;
    let shownFields = 0;
    let shownRelations = 0;
    for (let round = 0; round < ROUNDS; round++) {
      clock.now += 2 * CACHE_MS; // nothing kept from the last round's world answers this one
      const world = generate(rng, round);
      if (previousRoot) unshare(h, previousRoot);
      plant(h, world);
      previousRoot = world.notes[0].id;
      const pub = publicIds(world);
      const hidden = [...world.notes.filter((n) => !pub.has(n.id)), ...world.outside];
      const markers = [
        ...world.secrets,
        ...hidden.flatMap((n) => [n.id, n.title, ...(n.alias ? [n.alias] : [])]),
        ...hidden.flatMap((n) => n.attachment ? [n.attachment.id, n.attachment.title] : []),
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
        ...KINDS.map((k) => `/public/types/${k}`),
        ...refs.flatMap((ref) => [
          `/api/public/lore/${encodeURIComponent(ref)}`,
          `/public/lore/${encodeURIComponent(ref)}`,
          `/public/maps/${encodeURIComponent(ref)}`,
        ]),
        ...[...world.notes, ...world.outside].map((n) => `/api/public/images/${n.id}/x.png`),
        ...world.notes.flatMap((n) =>
          n.attachment ? [`/api/public/images/${n.attachment.id}/x`] : []
        ),
        ...["#lore", ...PROSE, ...hiddenQueries]
          .map((q) => `/api/public/search?q=${encodeURIComponent(q)}`),
        ...hiddenQueries.map((q) => `/?q=${encodeURIComponent(q)}`),
      ];
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
        const query = path.startsWith("/api/public/search?q=")
          ? decodeURIComponent(path.slice("/api/public/search?q=".length))
          : null;
        if (query !== null && hiddenQueries.includes(query)) {
          assert.deepEqual(JSON.parse(text).results, [], `seed ${seed} round ${round}: ${path}`);
        }
        if (echoes && path !== "/?q=rumours") {
          assert.match(text, /role="status">0 results for/, `seed ${seed} round ${round}: ${path}`);
        }
        if (path.startsWith("/public/maps/") && res.status === 200) drawnMaps++;
        if (path === "/public/timeline") datedEntries += text.match(/<time>/g)?.length ?? 0;
        if (path.startsWith("/api/public/lore/") && res.status === 200) {
          publicPages++;
          if (/<a>(?:rumours|the tide|lanterns|old roads|salt|harbour songs)<\/a>/.test(plain)) {
            keptTypedLinks++;
          }
        }
      }
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
    assert.ok(linkedPublicPages > ROUNDS, `only ${linkedPublicPages} links to public pages`);
    assert.ok(shownFields > ROUNDS, `only ${shownFields} player-facing fields shown`);
    assert.ok(shownRelations > 0, "no relation was shown");
    // the site's cross-note pages were drawn, not just refused
    assert.ok(drawnMaps > 0, "no map page was drawn");
    assert.ok(datedEntries > 0, "no timeline entry was shown");
  }, { env: { PUBLIC_CACHE_MS: String(CACHE_MS) }, now: () => clock.now });
});
