/**
 * Shapes of the public share API (seed: "Public lore note", "Public search result"), shared by
 * the public routes and the public site so both are built from the same data.
 *
 * @module
 */

/** A display attribute of a public note. */
export interface PublicAttribute {
  name: string;
  value: string;
}

/** A relation of a public note to another public note. */
export interface PublicRelation {
  name: string;
  targetNoteId: string;
  targetTitle: string;
  loreType: string | null;
}

/** `GET /api/public/lore/[id]`. */
export interface PublicLoreNote {
  noteId: string;
  title: string;
  loreType: string | null;
  /** Player-sanitized; links and images point at public URLs or are removed. */
  contentHtml: string;
  attributes: PublicAttribute[];
  resolvedRelations: PublicRelation[];
  portraitImageNoteId: string | null;
  themeSongUrl: string | null;
  /** ISO 8601. */
  dateModified: string | null;
}

/** One hit of `GET /api/public/search`. */
export interface PublicSearchHit {
  id: string;
  title: string;
  score: number;
  /** Public ancestor titles from the share root, joined with " / ". */
  path: string;
}

/** `GET /api/public/search`. */
export interface PublicSearchResult {
  results: PublicSearchHit[];
}
