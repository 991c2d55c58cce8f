/**
 * Answer schemas shared by several routes: the fields our API promises (plain objects: a backend
 * may add fields, which are passed on undescribed). They document the OpenAPI answers and are
 * checked against every answer in tests.
 *
 * @module
 */
import { z } from "zod";

/**
 * Where the caller's Parser credentials come from: its own browser session, a zero-login
 * session the service provisioned, or the environment.
 */
export const credentialSourceSchema = z.enum(["session", "provisioned", "env"]);

/**
 * A Parser account as answers show it: never a token.
 */
export const parserUserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
});

/**
 * A note in a result list (`noteSummary`): protected notes show the title `[protected]`.
 */
export const noteSummarySchema = z.object({
  noteId: z.string(),
  title: z.string(),
  type: z.string(),
  loreType: z.string().nullable(),
  isProtected: z.boolean(),
  parentNoteIds: z.array(z.string()),
  dateModified: z.string().nullable().describe("ISO 8601, null when Core sent none"),
});

/**
 * A lore note offered by title (pickers, mentions).
 */
export const titleHitSchema = z.object({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable(),
});
