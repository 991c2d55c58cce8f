/**
 * One visitor's view of the published share, for site pages built from more than one note
 * (lists, timelines, maps, backlinks). It hands out only notes that passed the share filter for
 * this visitor, so a page cannot show what the note's own answer would not.
 *
 * @module
 */
import { coreUtcToIso, hasLabel, labelValue, relationTarget } from "../lore/note_view.ts";
import { SANITIZER_VERSION } from "../sanitize/html.ts";
import { htmlToText } from "../sanitize/plain_text.ts";
import type { CoreNote } from "../upstream/core.ts";
import { mapLimit } from "../util/concurrency.ts";
import type { PixelSize } from "./image_sizes.ts";
import {
  hasHtmlContent,
  publicContent,
  publicRewriter,
  renderPublicContent,
} from "./public_content.ts";
import { imageSizes } from "./public_images.ts";
import {
  displayLabels,
  isPrivate,
  noIndexOf,
  noteResult,
  type PublicNoteResult,
} from "./public_notes.ts";
import { decodeParam, idFor, type PublicRequest } from "./public_request.ts";
import { searchNotes } from "./public_search.ts";
import type { PublicSearchResult } from "./public_types.ts";
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
  /** Visible notes the note's public content links to (links that survive the filter). */
  linksFrom(noteId: string): Promise<readonly string[]>;
  /** Visible notes whose public content links to the note, in breadth-first order. */
  backlinksTo(noteId: string): Promise<readonly string[]>;
  /** The share's public search, as `/api/public/search` answers it for this visitor. */
  search(q: string): Promise<PublicSearchResult>;
  /**
   * Pixel size of a visible image note, or of an image attachment of the visible note `ownerId`;
   * null for anything else or when it cannot be read.
   */
  imageSize(imageId: string, ownerId: string): Promise<PixelSize | null>;
}

/** What site pages may show of a visible note without rendering it. */
export interface VisibleNote {
  noteId: string;
  title: string;
  loreType: string | null;
  /** `#shareDescription` of the note, trimmed, or null. */
  description: string | null;
  isImage: boolean;
  /** Lore notes (`#lore`) are the ones listed by type. */
  isLore: boolean;
  /** ISO 8601. */
  dateModified: string | null;
  /** `#shareDisallowRobotIndexing` on the note or the share root. */
  noIndex: boolean;
  /** Promoted attribute by its label name (e.g. `inWorldDate`), as the public note shows it. */
  label(name: string): string | null;
  /** A public-relation target of the note (e.g. `mapImage`) this visitor may see, or null. */
  relation(name: string): string | null;
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
    text: async (noteId) =>
      htmlToText(await links.sanitized(noteId), (h) => h).replace(/\s+/g, " ").trim(),
    linksFrom: links.from,
    backlinksTo: links.to,
    search: async (q) => (await searchNotes(req, q.trim())).result,
    imageSize: imageSizes(req, seen),
  };
}

/** A visible note's summary for listing pages. */
function summaryOf(req: PublicRequest, note: CoreNote): VisibleNote {
  const { snap, access } = req;
  const promoted = displayLabels(snap, note);
  return {
    noteId: note.noteId,
    title: note.title,
    loreType: labelValue(note, "loreType")?.trim() || null,
    description: labelValue(note, "shareDescription")?.trim() || null,
    isImage: note.type === "image",
    isLore: hasLabel(note, "lore"),
    dateModified: coreUtcToIso(note.utcDateModified),
    noIndex: noIndexOf(snap, note),
    label: (name) => promoted.get(name) ?? null,
    relation: (name) => {
      const target = isPrivate(snap, note, name) ? undefined : relationTarget(note, name);
      return target !== undefined && snap.view.isPublic(target) && access.canSee(target)
        ? target
        : null;
    },
  };
}

/**
 * Links between visible notes, read from their public content: the sanitized HTML of a note,
 * where it links, and (cached per snapshot and visitor class) which notes link to it.
 */
function contentLinks(
  req: PublicRequest,
  seen: (noteId: string) => CoreNote,
  visibleIds: () => readonly string[],
) {
  const { snap, access, deps } = req;
  const sanitized = async (noteId: string) => {
    const note = seen(noteId);
    if (!hasHtmlContent(note)) return "";
    const raw = await publicContent(deps.caches, req.core, req.identity, note);
    // links only: the owner's attachments are not needed to know where it links
    return renderPublicContent(note, raw, publicRewriter(req.policy(), new Map()));
  };
  const from = async (noteId: string) => {
    const out = new Set<string>();
    for (const m of (await sanitized(noteId)).matchAll(/href="\/public\/lore\/([^"#?]+)"/g)) {
      const target = snap.view.resolve(decodeParam(m[1]) || m[1]);
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
        for (const target of targets[i]) out.set(target, [...(out.get(target) ?? []), source]);
      });
      return out;
    });
    return index.get(noteId) ?? [];
  };
  return { sanitized, from, to };
}
