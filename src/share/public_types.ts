/**
 * Shapes of the public share API ("Public lore note", "Public search result" of the API), shared
 * by the public routes and the public site so both are built from the same data. Each is a zod
 * schema, documenting and (in tests) checking the answers, with its type derived from it; and
 * what the site reads out of a note's content (kept by note_readings.ts).
 *
 * @module
 */
import { z } from "zod";
import type { CoreNote } from "../upstream/core.ts";

/**
 * A display attribute of a public note: a label its template promotes, under the promoted alias.
 */
export const publicAttributeSchema = z.object({ name: z.string(), value: z.string() });

/** A display attribute of a public note. */
export type PublicAttribute = z.output<typeof publicAttributeSchema>;

/**
 * A relation of a public note to another public note.
 */
export const publicRelationSchema = z.object({
  name: z.string(),
  targetNoteId: z.string(),
  targetTitle: z.string(),
  loreType: z.string().nullable(),
});

/** A relation of a public note to another public note. */
export type PublicRelation = z.output<typeof publicRelationSchema>;

/**
 * `GET /api/public/lore/[id]`: one published note as a visitor may see it.
 */
export const publicLoreNoteSchema = z.object({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable(),
  contentHtml: z.string().describe(
    "Player-sanitized HTML; links and images point at public URLs or are removed",
  ),
  attributes: z.array(publicAttributeSchema),
  resolvedRelations: z.array(publicRelationSchema).describe("Only to notes this visitor may see"),
  portraitImageNoteId: z.string().nullable().describe(
    "A public image note (`/api/public/images/{id}/…`)",
  ),
  themeSongUrl: z.string().nullable().describe("An absolute http(s) URL"),
  dateModified: z.string().nullable().describe("ISO 8601"),
});

/** `GET /api/public/lore/[id]`. */
export type PublicLoreNote = z.output<typeof publicLoreNoteSchema>;

/**
 * One hit of `GET /api/public/search`.
 */
export const publicSearchHitSchema = z.object({
  id: z.string().describe("The note's `#shareAlias` when it has one, else its noteId"),
  title: z.string(),
  score: z.number(),
  path: z.string().describe('Public ancestor titles from the share root, joined with " / "'),
});

/** One hit of `GET /api/public/search`. */
export type PublicSearchHit = z.output<typeof publicSearchHitSchema>;

/**
 * `GET /api/public/search`: best first, then by title.
 */
export const publicSearchResultSchema = z.object({ results: z.array(publicSearchHitSchema) });

/** `GET /api/public/search`. */
export type PublicSearchResult = z.output<typeof publicSearchResultSchema>;

/** What the site reads out of a note's public content for one visitor class. */
export const noteReadingSchema = z.object({
  /** What its public links name (`/public/lore/<ref>`, percent-decoded), in order. */
  refs: z.array(z.string()).readonly(),
  /** Its visible text as written: case kept, whitespace collapsed. */
  text: z.string(),
  /** Text of its first paragraph, shortened like a description; "" when it has none. */
  lead: z.string(),
});

/** What the site reads out of a note's public content for one visitor class. */
export type NoteReading = z.output<typeof noteReadingSchema>;

/** What site pages may show of a visible note whoever the visitor is (visitor_view.ts). */
export interface NoteFacts {
  noteId: string;
  title: string;
  loreType: string | null;
  /** `#shareDescription` of the note, trimmed, or null. */
  description: string | null;
  /** `#shareDateLabel` of the note (its in-world date as players read it), trimmed, or null. */
  dateLabel: string | null;
  isImage: boolean;
  /** Lore notes (`#lore`) are the ones listed by type. */
  isLore: boolean;
  /** ISO 8601. */
  dateModified: string | null;
  /** `#shareDisallowRobotIndexing` on the note or the share root. */
  noIndex: boolean;
}

/** A note's facts with its promoted labels by name, kept by note object while its root stands. */
export interface KeptSummary {
  /** The share root's object the facts were made with (its lists decide what is private). */
  root: CoreNote | undefined;
  facts: NoteFacts & { labels: ReadonlyMap<string, string> };
}
