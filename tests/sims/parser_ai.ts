/**
 * Parser test double, feature module (filled in by its feature's work).
 *
 * @module
 */
import type { ParserFeatureDeps, ParserRoute } from "./parser_kit.ts";

/** Knobs of this feature in the double. */
export interface AiSimOptions {
  /** Reserved. */
  reserved?: never;
}

/**
 * This feature's route rows.
 *
 * @example
 * ```ts
 * const rows = aiSimRoutes(deps, {});
 * ```
 */
export function aiSimRoutes(_deps: ParserFeatureDeps, _opts: AiSimOptions): ParserRoute[] {
  return [];
}
