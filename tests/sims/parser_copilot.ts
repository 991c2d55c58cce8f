/**
 * Parser test double, feature module (filled in by its feature's work).
 *
 * @module
 */
import type { ParserFeatureDeps, ParserRoute } from "./parser_kit.ts";

/** Knobs of this feature in the double. */
export interface CopilotSimOptions {
  /** Reserved. */
  reserved?: never;
}

/**
 * This feature's route rows.
 *
 * @example
 * ```ts
 * const rows = copilotSimRoutes(deps, {});
 * ```
 */
export function copilotSimRoutes(
  _deps: ParserFeatureDeps,
  _opts: CopilotSimOptions,
): ParserRoute[] {
  return [];
}
