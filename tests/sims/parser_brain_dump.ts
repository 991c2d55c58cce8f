/**
 * Parser test double, feature module (filled in by its feature's work).
 *
 * @module
 */
import type { ParserFeatureDeps, ParserRoute } from "./parser_kit.ts";

/** Knobs of this feature in the double. */
export interface BrainDumpSimOptions {
  /** Reserved. */
  reserved?: never;
}

/**
 * This feature's route rows.
 *
 * @example
 * ```ts
 * const rows = brainDumpSimRoutes(deps, {});
 * ```
 */
export function brainDumpSimRoutes(
  _deps: ParserFeatureDeps,
  _opts: BrainDumpSimOptions,
): ParserRoute[] {
  return [];
}
