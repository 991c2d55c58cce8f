/**
 * Core's own structural notes (`root`, `_hidden`, `_share`, templates, options…). Destructive
 * routes refuse them: deleting `_share` would unpublish everything, and Core itself answers 500
 * for `root`.
 *
 * @module
 */
import { invalidRequest } from "../http/errors.ts";

/**
 * Whether an id names a Core system note.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isSystemNote("_share"), true);
 * assert.equal(isSystemNote("abc123"), false);
 * ```
 */
export function isSystemNote(noteId: string): boolean {
  return noteId === "root" || noteId.startsWith("_");
}

/**
 * 400 for a system note.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * refuseSystemNote("abc123", "deleted"); // passes
 * assert.throws(() => refuseSystemNote("_share", "deleted"), {
 *   status: 400,
 *   message: "System notes cannot be deleted",
 * });
 * ```
 */
export function refuseSystemNote(noteId: string, action: string): void {
  if (isSystemNote(noteId)) throw invalidRequest(`System notes cannot be ${action}`);
}
