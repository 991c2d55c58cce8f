/**
 * One visitor's view of the published share, for site pages built from more than one note
 * (lists, timelines, maps, backlinks). It hands out only notes that passed the share filter for
 * this visitor, so a page cannot show what the note's own answer would not.
 *
 * @module
 */
import { coreUtcToIso, hasLabel, labelValue, relationTarget } from "../lore/note_view.ts";
import { userRelations } from "../lore/user_relations.ts";
import { SANITIZER_VERSION } from "../sanitize/html.ts";
import type { CoreNote } from "../upstream/core.ts";
import { mapLimit } from "../util/concurrency.ts";
import type { PixelSize } from "./image_sizes.ts";
import { noteReading } from "./note_readings.ts";
import { imageSizes } from "./public_images.ts";
import {
  displayLabels,
  isPrivate,
  noIndexOf,
  noteResult,
  type PublicNoteResult,
} from "./public_notes.ts";
import { idFor, type PublicRequest } from "./public_request.ts";
import { searchNotes } from "./public_search.ts";
import type { NoteFacts, PublicSearchResult } from "./public_types.ts";
import { publicNotFound } from "./visitor_access.ts";

/**
 * One visitor's view of the published share, for site pages built from more than one note.
 * Everything it hands out passed the share filter for this visitor: hidden notes, and notes
 * behind a password the visitor did not give, do not exist here.
 */
export interface VisitorView {
  /** The share root's noteId. */
  rootId: string;
  /** Notes this visitor may see, breadth-first from the root (children in Core's order). */
  visibleIds(): readonly string[];
  canSee(noteId: string): boolean;
  /** Whether a note the visitor sees is behind `#shareCredentials` (whose password they gave). */
  isGuarded(noteId: string): boolean;
  /** The `#shareAlias` of a visible note, else its id (what its public URL uses). */
  idFor(noteId: string): string;
  /** A visible note's title, lore type, `#shareDescription`, image-ness and date. */
  summary(noteId: string): VisibleNote;
  /** Visible children of a visible note, in Core's order. */
  childrenOf(noteId: string): readonly string[];
  /**
   * Visible ancestors from the root down to the parent, along the note's shortest public path:
   * the place a note with several parents is listed.
   */
  ancestorsOf(noteId: string): readonly string[];
  /** A visible note as `/api/public/lore/:id` shows it. */
  note(noteId: string): Promise<PublicNoteResult>;
  /** The visible text of a visible note as written (case kept, no GM-only part). */
  text(noteId: string): Promise<string>;
  /** The text of a visible note's first paragraph, shortened like a description. */
  lead(noteId: string): Promise<string>;
  /** Visible notes the note's public content links to (links that survive the filter). */
  linksFrom(noteId: string): Promise<readonly string[]>;
  /** Visible notes whose public content links to the note, in breadth-first order. */
  backlinksTo(noteId: string): Promise<readonly string[]>;
  /**
   * Relations other visible notes hold to the note (their page shows them as "Related"), unless
   * their GM keeps that relation private: the other end of each, in breadth-first order.
   */
  relatedFrom(noteId: string): readonly { name: string; sourceId: string }[];
  /**
   * A value made from this visitor's view of the snapshot, made once per snapshot and visitor
   * class under `name` (which names anything else it depends on): the site's frame.
   */
  shared<T>(name: string, make: () => Promise<T>): Promise<T>;
  /** The share's public search, as `/api/public/search` answers it for this visitor. */
  search(q: string): Promise<PublicSearchResult>;
  /**
   * Pixel size of a visible image note, or of an image attachment of the visible note `ownerId`;
   * null for anything else or when it cannot be read.
   */
  imageSize(imageId: string, ownerId: string): Promise<PixelSize | null>;
}

/** What site pages may show of a visible note without rendering it. */
export interface VisibleNote extends NoteFacts {
  /** Promoted attribute by its label name (e.g. `inWorldDate`), as the public note shows it. */
  label(name: string): string | null;
  /** A public-relation target of the note (e.g. `mapImage`) this visitor may see, or null. */
  relation(name: string): string | null;
  /**
   * The target of one of the note's share-control relations (the share root's `~shareCard`),
   * which visitors never see as a relation but the site acts on: null unless this visitor may
   * see the target.
   */
  controlRelation(name: string): string | null;
}

/** The view of the visitor making `req`; what it reads is memoised for the request. */
export function visitorView(req: PublicRequest): VisitorView {
  const { snap, access } = req;
  const canSee = (noteId: string) => snap.view.isPublic(noteId) && access.canSee(noteId);
  /** A note the visitor may see; the public 404 for any other. */
  const seen = (noteId: string) => {
    if (!canSee(noteId)) throw publicNotFound();
    return snap.byId.get(noteId)!;
  };
  let visible: string[] | undefined;
  const visibleIds = () => visible ??= snap.view.publicIds().filter((id) => access.canSee(id));
  const rendered = new Map<string, Promise<PublicNoteResult>>();
  const links = contentLinks(req, seen, visibleIds);
  return {
    rootId: snap.rootId,
    visibleIds,
    canSee,
    isGuarded: (noteId) => canSee(noteId) && snap.view.credentialGroups(noteId).length > 0,
    idFor: (id) => idFor(snap, id),
    summary: (noteId) => summaryOf(req, seen(noteId)),
    childrenOf: (noteId) =>
      (seen(noteId).childNoteIds ?? []).filter((id) => id !== snap.rootId && canSee(id)),
    ancestorsOf: (noteId) => (seen(noteId), snap.ancestorsOf(noteId)),
    note: (noteId) => {
      let r = rendered.get(noteId);
      if (!r) rendered.set(noteId, r = noteResult(req, seen(noteId)));
      return r;
    },
    text: async (noteId) => (await links.reading(noteId)).text,
    lead: async (noteId) => (await links.reading(noteId)).lead,
    linksFrom: links.from,
    backlinksTo: links.to,
    relatedFrom: (noteId) => {
      seen(noteId);
      const index = snap.derived(`relatedFrom\n${access.fingerprint()}`, () => {
        const out = new Map<string, { name: string; sourceId: string }[]>();
        for (const sourceId of visibleIds()) {
          const source = snap.byId.get(sourceId)!;
          for (const r of userRelations(source)) {
            if (r.value === sourceId || !canSee(r.value) || isPrivate(snap, source, r.name)) {
              continue;
            }
            const to = out.get(r.value);
            if (to) to.push({ name: r.name, sourceId });
            else out.set(r.value, [{ name: r.name, sourceId }]);
          }
        }
        return out;
      });
      return index.get(noteId) ?? [];
    },
    search: async (q) => (await searchNotes(req, q.trim())).result,
    shared: (name, make) => snap.derived(`shared\n${access.fingerprint()}\n${name}`, make),
    imageSize: imageSizes(req, seen),
  };
}

/** What a summary shows whoever the visitor: it depends on the note and the share root alone. */

/**
 * A visible note's summary for listing pages. Its visitor-independent part is kept by the
 * note's object while the share root's object is the same: both are reused by later snapshots
 * while unchanged, so a new snapshot summarises only the notes that changed.
 */
function summaryOf(req: PublicRequest, note: CoreNote): VisibleNote {
  const { snap, access } = req;
  const root = snap.byId.get(snap.rootId);
  const summaries = req.deps.caches.summaries;
  let kept = summaries.get(note);
  if (kept === undefined || kept.root !== root) {
    kept = {
      root,
      facts: {
        noteId: note.noteId,
        title: note.title,
        loreType: labelValue(note, "loreType")?.trim() || null,
        description: labelValue(note, "shareDescription")?.trim() || null,
        dateLabel: labelValue(note, "shareDateLabel")?.trim() || null,
        isImage: note.type === "image",
        isLore: hasLabel(note, "lore"),
        dateModified: coreUtcToIso(note.utcDateModified),
        noIndex: noIndexOf(snap, note),
        labels: displayLabels(snap, note),
      },
    };
    summaries.set(note, kept);
  }
  const { labels, ...facts } = kept.facts;
  const visible = (target: string | undefined) =>
    target !== undefined && snap.view.isPublic(target) && access.canSee(target) ? target : null;
  return {
    ...facts,
    label: (name) => labels.get(name) ?? null,
    relation: (name) => isPrivate(snap, note, name) ? null : visible(relationTarget(note, name)),
    controlRelation: (name) => visible(relationTarget(note, name)),
  };
}

/**
 * Links between visible notes, read from their kept readings (note_readings.ts): where a note
 * links, and (cached per snapshot and visitor class) which notes link to it.
 */
function contentLinks(
  req: PublicRequest,
  seen: (noteId: string) => CoreNote,
  visibleIds: () => readonly string[],
) {
  const { snap, access, deps } = req;
  const reading = (noteId: string) => noteReading(req, seen(noteId));
  const from = async (noteId: string) => {
    const out = new Set<string>();
    for (const ref of (await reading(noteId)).refs) {
      const target = snap.view.resolve(ref);
      if (target !== undefined && target !== noteId && access.canSee(target)) out.add(target);
    }
    return [...out];
  };
  const to = async (noteId: string) => {
    seen(noteId);
    const key = [req.identity, snap.version, SANITIZER_VERSION, access.fingerprint()].join("\n");
    const index = await deps.caches.backlinks.getOrLoad(key, async () => {
      const sources = visibleIds();
      const targets = await mapLimit(sources, deps.concurrency, from);
      const out = new Map<string, string[]>();
      sources.forEach((source, i) => {
        for (const target of targets[i]) {
          const linking = out.get(target);
          if (linking) linking.push(source);
          else out.set(target, [source]);
        }
      });
      deps.caches.flush({ many: true }).catch(() => {}); // every visible note was read: keep it for a restart
      return out;
    });
    return index.get(noteId) ?? [];
  };
  return { reading, from, to };
}
