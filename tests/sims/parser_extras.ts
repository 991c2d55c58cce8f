/**
 * Parser test double, feature module (filled in by its feature's work).
 *
 * @module
 */
import type { ParserFeatureDeps, ParserRoute } from "./parser_kit.ts";

/** Knobs of this feature in the double. */
export interface ExtrasSimOptions {
  /** Reserved. */
  reserved?: never;
}

/**
 * This feature's route rows.
 *
 * @example
 * ```ts
 * const rows = extrasSimRoutes(deps, {});
 * ```
 */
export function extrasSimRoutes(_deps: ParserFeatureDeps, _opts: ExtrasSimOptions): ParserRoute[] {
  return [];
}
