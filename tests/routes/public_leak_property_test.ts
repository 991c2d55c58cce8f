/**
 * Property test of the public side's promise: random share trees in the Core double, with
 * reference links, typed links, include-note sections, image notes and image attachments
 * pointing between hidden and public notes (and at notes outside the share), `.gm-only`
 * sections, aliases, clones and inheritable flags. Every public route and page is asked for
 * every note, alias and title; no answer may contain a hidden note's id, title or alias, an
 * attachment of a hidden note, or GM-only text — not in a page's navigation, breadcrumbs,
 * backlinks, preview metadata, map, timeline, sitemap or feed either. A naive reference decides
 * what is hidden.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { CHART_PNG, templateId, W } from "../../sims/world.ts";
import { prng, propertySeed } from "../helpers/prng.ts";

type Rng = () => number;

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)];
const token = (rng: Rng, n = 8) =>
  Array.from({ length: n }, () => pick(rng, [..."bcdfghjkmnpqrstvwxz"])).join("");

/** Prose the writer typed: never part of a generated title, alias or id. */
const PROSE = ["rumours", "the tide", "lanterns", "old roads", "salt", "harbour songs"];

interface GenNote {
  id: string;
  title: string;
  alias: string | null;
  type: "text" | "image";
  parents: number[]; // indexes of earlier notes; [] for the root
  flag: "draft" | "gmOnly" | null;
  inheritable: boolean;
  attachment: { id: string; title: string } | null;
  /** Lore type; its template promotes `geolocation` (location) or `inWorldDate` (event). */
  kind: "location" | "event";
  /** Index of a note this one draws as its map (`~mapImage`). */
  mapImage: number | null;
}

interface World {
  notes: GenNote[];
  outside: GenNote[];
  secrets: string[];
  content: Map<string, string>;
}

function generate(rng: Rng, round: number): World {
  const count = 6 + Math.floor(rng() * 10);
  const notes: GenNote[] = [];
  for (let i = 0; i < count; i++) {
    const parents = i === 0 ? [] : [Math.floor(rng() * i)];
    if (i > 1 && rng() < 0.2) parents.push(Math.floor(rng() * i)); // a clone
    const flag = i === 0 ? null : rng() < 0.2 ? "draft" : rng() < 0.15 ? "gmOnly" : null;
    const type = i > 0 && rng() < 0.2 ? "image" : "text";
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
      kind: rng() < 0.5 ? "location" : "event",
      mapImage: i > 0 && rng() < 0.4 ? Math.floor(rng() * i) : null,
    });
  }
  const outside = [0, 1].map((k) => ({
    id: `p${round}o${k}${token(rng, 6)}`,
    title: `Out${token(rng)} ${token(rng, 5)}`,
    alias: null,
    type: "text" as const,
    parents: [],
    flag: null,
    inheritable: false,
    attachment: null,
    kind: "location" as const,
    mapImage: null,
  }));
  const all = [...notes, ...outside];
  const secrets: string[] = [];
  const content = new Map<string, string>();
  for (const note of [...notes.filter((n) => n.type === "text"), ...outside]) {
    const parts: string[] = [`<p>${pick(rng, PROSE)} and ${pick(rng, PROSE)}.</p>`];
    for (let k = 0; k < 4; k++) {
      const target = pick(rng, all);
      const href = `#root/${target.id}`;
      switch (Math.floor(rng() * 7)) {
        case 0:
          parts.push(`<p><a class="reference-link" href="${href}">${target.title}</a></p>`);
          break;
        case 1: // the writer typed the target's title
          parts.push(`<p>See <a href="${href}">${target.title}</a> now.</p>`);
          break;
        case 2: // the writer typed something else
          parts.push(`<p>About <a href="${href}">${pick(rng, PROSE)}</a>.</p>`);
          break;
        case 3:
          parts.push(
            `<section class="include-note" data-note-id="${target.id}" data-box-size="small">` +
              `<p>${target.title}</p></section>`,
          );
          break;
        case 4:
          parts.push(
            `<p><img src="api/images/${target.id}/${
              encodeURIComponent(target.title)
            }" alt="${target.title}"></p>`,
          );
          break;
        case 5: {
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
  return { notes, outside, secrets, content };
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
    store.createAttribute({ noteId: n.id, type: "label", name: "lore", value: "" });
    if (n.type === "text") {
      // dated events and pinned places: the timeline and map pages draw them
      store.createAttribute({ noteId: n.id, type: "label", name: "loreType", value: n.kind });
      store.createAttribute({
        noteId: n.id,
        type: "relation",
        name: "template",
        value: templateId(n.kind),
      });
      const [name, value] = n.kind === "event"
        ? ["inWorldDate", `11${i}-0${1 + (i % 9)}-1${i % 10}`]
        : ["geolocation", `${(i * 7) % 64}, ${(i * 5) % 48}`];
      store.createAttribute({ noteId: n.id, type: "label", name, value });
    }
    if (n.alias) {
      store.createAttribute({ noteId: n.id, type: "label", name: "shareAlias", value: n.alias });
    }
    if (n.flag) {
      store.createAttribute({
        noteId: n.id,
        type: "label",
        name: n.flag,
        value: "",
        isInheritable: n.inheritable,
      });
    }
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
    if (n.mapImage !== null && n.type === "text") {
      const value = world.notes[n.mapImage].id;
      store.createAttribute({ noteId: n.id, type: "relation", name: "mapImage", value });
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
  }
  for (const [id, html] of world.content) store.setNoteContent(id, html);
  store.createBranch({ noteId: root.id, parentNoteId: "_share" });
  store.createAttribute({ noteId: root.id, type: "label", name: "shareRoot", value: "" });
}

/** The previous round's share root stops being one (one root at a time). */
function unshare(h: Harness, rootId: string): void {
  for (const a of h.core.store.ownAttributes(rootId)) {
    if (a.name === "shareRoot") h.core.store.deleteAttribute(a.attributeId);
  }
}

function decoded(text: string): string {
  return text.replace(/\\u([0-9a-f]{4})/gi, (_, x) => String.fromCharCode(parseInt(x, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_, x) => String.fromCodePoint(parseInt(x, 16)))
    .replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

const ROUNDS = 16;

Deno.test("property: no public answer names a hidden note or shows GM-only text", () =>
  withHarness(async (h) => {
    // The sample world's own share root steps aside; each round publishes its own tree.
    unshare(h, W.guide);
    const seed = propertySeed(20261123);
    const rng = prng(seed);
    let previousRoot: string | null = null;
    let publicPages = 0;
    let keptTypedLinks = 0;
    let drawnMaps = 0;
    let datedEntries = 0;
    for (let round = 0; round < ROUNDS; round++) {
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
      ];
      const refs = [...world.notes, ...world.outside].flatMap((n) => [n.id, n.alias ?? n.id]);
      const paths = [
        "/",
        "/?q=rumours",
        "/sitemap.xml",
        "/public/feed.atom",
        "/public/timeline",
        "/public/types/location",
        "/public/types/event",
        ...refs.flatMap((ref) => [
          `/api/public/lore/${encodeURIComponent(ref)}`,
          `/public/lore/${encodeURIComponent(ref)}`,
          `/public/maps/${encodeURIComponent(ref)}`,
        ]),
        ...[...world.notes, ...world.outside].map((n) => `/api/public/images/${n.id}/x.png`),
        ...world.notes.flatMap((n) =>
          n.attachment ? [`/api/public/images/${n.attachment.id}/x`] : []
        ),
        ...["#lore", ...PROSE, ...hidden.flatMap((n) => [n.title, n.alias ?? n.id])]
          .map((q) => `/api/public/search?q=${encodeURIComponent(q)}`),
        ...hidden.map((n) => `/?q=${encodeURIComponent(n.title.split(" ")[0])}`),
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
        for (const m of markers) {
          assert.ok(
            !all.includes(m) && !plain.includes(m),
            `seed ${seed} round ${round}: ${path} reveals ${JSON.stringify(m)}`,
          );
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
      // Public notes answer: the property is not met by hiding everything.
      for (const id of pub) {
        const res = await h.request(`/api/public/lore/${id}`);
        assert.equal(res.status, 200, `seed ${seed} round ${round}: public ${id}`);
        await res.body?.cancel();
      }
    }
    assert.ok(publicPages > ROUNDS, `only ${publicPages} public pages`);
    assert.ok(keptTypedLinks > 0, "typed text of links to hidden notes should stay");
    // the site's cross-note pages were drawn, not just refused
    assert.ok(drawnMaps > 0, "no map page was drawn");
    assert.ok(datedEntries > 0, "no timeline entry was shown");
  }, { env: { PUBLIC_CACHE_MS: "0" } }));
