/**
 * What rendering public content may ask of the share and of the visitor: which notes are public,
 * which this visitor may see, what a link target is called, and where its page is. Every render
 * asks through this one interface, which is what lets policy_record.ts tell when a kept render
 * still holds.
 *
 * @module
 */
import type { CoreNote } from "../upstream/core.ts";
import { ownShareAlias } from "./tree_filter.ts";

/** What a link or image may show of the note it names: its id, title, type and alias. */
export interface LinkTarget {
  noteId: string;
  title: string;
  type: string;
  /** Its own `#shareAlias`, or null. */
  alias: string | null;
}

/**
 * A snapshot note as a link names it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const note = { noteId: "n1", title: "Harbor", type: "text", attributes: [] };
 * assert.deepEqual(linkTarget(note), { noteId: "n1", title: "Harbor", type: "text", alias: null });
 * ```
 */
export function linkTarget(
  note: Pick<CoreNote, "noteId" | "title" | "type" | "attributes">,
): LinkTarget {
  return { noteId: note.noteId, title: note.title, type: note.type, alias: ownShareAlias(note) };
}

/** What the public rewriter needs to know about the share and this visitor. */
export interface PublicLinkPolicy {
  /** The share root (what `/share/` and `./` name). */
  rootId: string;
  /** Public note (any visitor may follow a link to it; credentials are asked there). */
  isPublic(noteId: string): boolean;
  /** Public AND this visitor may see it (its title or bytes may be shown). */
  canSee(noteId: string): boolean;
  /** Any note of the share snapshot, public or not, as a link names it. */
  target(noteId: string): LinkTarget | undefined;
  /** The noteId of a snapshot note named by id or by its own `#shareAlias`, public or not. */
  resolve(idOrAlias: string): string | undefined;
  /** `/public/lore/<alias or id>` of a public note. */
  pagePath(noteId: string): string;
  /** Hosts of the private backends: links there are dropped (internal addresses). */
  backendHosts: ReadonlySet<string>;
}
