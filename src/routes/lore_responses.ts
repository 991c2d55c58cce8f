/**
 * Answer schemas of the private lore routes (notes, content, tree, maps, attributes, images,
 * collections, share settings) that more than one of them uses. Core's own objects are passed on
 * as Core sent them, so they are documented by the schemas every Core answer is checked against
 * on its way in (upstream/core_schemas.ts): exactly the fields the service can promise; fields a
 * newer Core adds are passed on undescribed.
 *
 * @module
 */
import { z } from "zod";
import { coreNoteSchema, coreRevisionSchema, PROTECTED_TITLE } from "../upstream/core_schemas.ts";

/**
 * A note as Core's external API describes it, attributes included (inherited ones keep their
 * owner's `noteId`); a protected note shows the title `[protected]`.
 *
 * @example
 * ```ts
 * noteSchema.parse({
 *   noteId: "abc", title: "Ashford", type: "text", mime: "text/html", isProtected: false,
 *   parentNoteIds: ["root"], childNoteIds: [], parentBranchIds: ["root_abc"], childBranchIds: [],
 *   attributes: [],
 * });
 * ```
 */
export const noteSchema = coreNoteSchema.in.describe(
  `Core's note object; a protected note's title is \`${PROTECTED_TITLE}\``,
);

/**
 * A revision as Core describes it (list entries carry `contentLength`); a protected one shows
 * the title `[protected]`.
 *
 * @example
 * ```ts
 * revisionSchema.parse({
 *   revisionId: "r1", noteId: "abc", type: "text", mime: "text/html", isProtected: false,
 *   title: "Ashford",
 * });
 * ```
 */
export const revisionSchema = coreRevisionSchema.in.describe(
  `Core's revision object; a protected revision's title is \`${PROTECTED_TITLE}\``,
);

/**
 * A note's `#loreType` as answers show it.
 *
 * @example
 * ```ts
 * loreTypeField.parse(null);
 * ```
 */
export const loreTypeField = z.string().nullable().describe(
  "The note's `#loreType` (own or inherited), null when it has none",
);

/**
 * A note of a collection or a search: Core's note plus its lore type.
 *
 * @example
 * ```ts
 * loreNoteSchema.parse({
 *   noteId: "abc", title: "Ashford", type: "text", mime: "text/html", isProtected: false,
 *   parentNoteIds: ["root"], childNoteIds: [], parentBranchIds: ["root_abc"], childBranchIds: [],
 *   attributes: [], loreType: "location",
 * });
 * ```
 */
export const loreNoteSchema = noteSchema.extend({ loreType: loreTypeField });
