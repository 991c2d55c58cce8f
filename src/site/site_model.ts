/**
 * What every public page knows about the world around it, built from one visitor's view of the
 * share: the world's name and description, the navigation tree, the lore types, and for a note
 * its breadcrumbs, children, neighbours and backlinks. Only notes the visitor may see appear.
 *
 * @module
 */
import type { VisitorView } from "../share/public_api.ts";
import { DESCRIPTION_MAX, shorten } from "../sanitize/prose.ts";
import { displayTitle } from "./format.ts";
import { type PreviewImage, worldCardImage } from "./preview_image.ts";

export { DESCRIPTION_MAX, firstParagraph, shorten, tidyText } from "../sanitize/prose.ts";

/** A link to a public page: the id its URL uses (alias or noteId) and the title shown. */
export interface NavLink {
  /** `#shareAlias` or noteId. */
  id: string;
  title: string;
}

/** A note of the navigation tree. */
export interface NavNode extends NavLink {
  noteId: string;
  children: NavNode[];
}

/** The world as every page shows it. */
export interface SiteFrame {
  /** The share root's title. */
  title: string;
  /** The root's `#shareDescription`, else its first paragraph (empty when it has none). */
  description: string;
  /** The share root with every visible note below it, each once (at its shortest path). */
  tree: NavNode;
  /** Lore types with at least one visible note, by name. */
  loreTypes: readonly string[];
  /** Visible notes with a public map image, in tree order. */
  maps: NavLink[];
  /** Whether any visible note has an in-world date. */
  hasTimeline: boolean;
  /** Whether the visitor sees notes behind `#shareCredentials` (pages offer "Lock again"). */
  unlocked?: boolean;
  /** The world's preview card: what link previews of a page without a picture show. */
  card: PreviewImage;
  /** The origin visitors reached us at (`https://lore.example.org`), for absolute URLs. */
  origin: string;
}

/** Where a note sits in the world. */
export interface NotePlace {
  /** From the share root down to the note's parent. */
  breadcrumbs: NavLink[];
  children: NavLink[];
  previous: NavLink | null;
  next: NavLink | null;
  /** Visible notes whose public content links here. */
  backlinks: NavLink[];
  /** Relations other visible notes hold to this one ("Ally", from whom, and its noteId). */
  relatedFrom: { name: string; from: NavLink; fromNoteId: string }[];
}

/** Notes that get a page in the navigation (images are shown by the notes that use them). */
function listed(view: VisitorView, noteId: string): boolean {
  return !view.summary(noteId).isImage;
}

function linkTo(view: VisitorView, noteId: string): NavLink {
  return { id: view.idFor(noteId), title: displayTitle(view.summary(noteId).title) };
}

/** The visible parent a note is listed under: its nearest visible ancestor on its shortest path. */
function listedParent(view: VisitorView, noteId: string): string {
  const ancestors = view.ancestorsOf(noteId);
  for (let i = ancestors.length - 1; i >= 0; i--) {
    if (view.canSee(ancestors[i])) return ancestors[i];
  }
  return view.rootId;
}

/**
 * The world's frame for one visitor: name, description, navigation tree, lore types; made once
 * per snapshot and visitor class.
 */
export async function siteFrame(view: VisitorView, origin: string): Promise<SiteFrame> {
  return { ...await view.shared("frame", () => buildFrame(view)), origin };
}

async function buildFrame(view: VisitorView): Promise<Omit<SiteFrame, "origin">> {
  const root = view.summary(view.rootId);
  const description = root.description
    ? shorten(root.description, DESCRIPTION_MAX)
    : await view.lead(view.rootId);
  const nodes = new Map<string, NavNode>();
  const node = (noteId: string) => {
    let n = nodes.get(noteId);
    if (!n) nodes.set(noteId, n = { noteId, ...linkTo(view, noteId), children: [] });
    return n;
  };
  const tree = node(view.rootId);
  const types = new Set<string>();
  const maps: NavLink[] = [];
  let hasTimeline = false;
  let unlocked = false;
  // breadth-first: a parent's node exists before its children's
  for (const id of view.visibleIds()) {
    const note = view.summary(id);
    if (note.isLore && note.loreType) types.add(note.loreType);
    if (note.relation("mapImage") !== null) maps.push(linkTo(view, id));
    hasTimeline ||= note.label("inWorldDate") !== null;
    unlocked ||= view.isGuarded(id);
    if (id === view.rootId || !listed(view, id)) continue;
    node(listedParent(view, id)).children.push(node(id));
  }
  const title = displayTitle(root.title);
  return {
    title,
    description,
    tree,
    loreTypes: [...types].sort(),
    maps,
    hasTimeline,
    unlocked,
    card: await worldCardImage(view, title),
  };
}

/**
 * Where a visible note sits: breadcrumbs, children, previous/next sibling and backlinks.
 */
export async function notePlace(view: VisitorView, noteId: string): Promise<NotePlace> {
  const breadcrumbs = noteId === view.rootId
    ? []
    : view.ancestorsOf(noteId).filter((id) => view.canSee(id)).map((id) => linkTo(view, id));
  const children = view.childrenOf(noteId).filter((id) => listed(view, id))
    .map((id) => linkTo(view, id));
  let previous: NavLink | null = null;
  let next: NavLink | null = null;
  if (noteId !== view.rootId) {
    const parent = listedParent(view, noteId);
    const siblings = view.childrenOf(parent).filter((id) =>
      listed(view, id) && listedParent(view, id) === parent
    );
    const at = siblings.indexOf(noteId);
    if (at > 0) previous = linkTo(view, siblings[at - 1]);
    if (at >= 0 && at < siblings.length - 1) next = linkTo(view, siblings[at + 1]);
  }
  const backlinks = (await view.backlinksTo(noteId)).map((id) => linkTo(view, id));
  const relatedFrom = view.relatedFrom(noteId).map((r) => ({
    name: r.name,
    from: linkTo(view, r.sourceId),
    fromNoteId: r.sourceId,
  }));
  return { breadcrumbs, children, previous, next, backlinks, relatedFrom };
}
