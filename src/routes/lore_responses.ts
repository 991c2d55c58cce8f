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
 */
export const noteSchema = coreNoteSchema.in.describe(
  `Core's note object; a protected note's title is \`${PROTECTED_TITLE}\``,
);

/**
 * A revision as Core describes it (list entries carry `contentLength`); a protected one shows
 * the title `[protected]`.
 */
export const revisionSchema = coreRevisionSchema.in.describe(
  `Core's revision object; a protected revision's title is \`${PROTECTED_TITLE}\``,
);

/**
 * A note's `#loreType` as answers show it.
 */
export const loreTypeField = z.string().nullable().describe(
  "The note's `#loreType` (own or inherited), null when it has none",
);

/**
 * A note of a collection or a search: Core's note plus its lore type.
 */
export const loreNoteSchema = noteSchema.extend({ loreType: loreTypeField });
