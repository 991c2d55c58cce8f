/**
 * The route table: every route the service serves, in one list.
 *
 * @module
 */
import type { Route } from "../router.ts";
import { loreRoutes } from "./lore.ts";
import { systemRoutes } from "./system.ts";

/** All routes. */
export const allRoutes: readonly Route[] = [
  ...systemRoutes,
  ...loreRoutes,
];
