/**
 * Telling "the id you gave does not exist" apart from a Core failure when a write references
 * another note.
 *
 * @module
 */
import { ApiError, invalidRequest, upstreamCode } from "../http/errors.ts";

/**
 * Whether a Core error means a referenced note is missing: Core answers a missing parent with
 * 400 `PROPERTY_VALIDATION_ERROR` and a missing relation target with 404.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiError } from "../http/errors.ts";
 *
 * assert.equal(isMissingReference(new ApiError(404, "NOT_FOUND", "Note not found")), true);
 * ```
 */
export function isMissingReference(e: unknown): boolean {
  return e instanceof ApiError &&
    (e.status === 404 || upstreamCode(e) === "PROPERTY_VALIDATION_ERROR");
}

/**
 * A `.catch` handler turning a missing-reference error into 400 naming the body field.
 */
export function rethrowMissingReference(field: string): (e: unknown) => never {
  return (e) => {
    if (isMissingReference(e)) {
      throw invalidRequest(`${field} does not name an existing note`, [{
        path: `body.${field}`,
        message: "not found",
      }]);
    }
    throw e;
  };
}
