/**
 * Route group (filled in by its feature's work).
 *
 * @module
 */
import type { Route } from "../router.ts";

/** This group's routes. */
export const copilotRoutes: Route[] = [];
