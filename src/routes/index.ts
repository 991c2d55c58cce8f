/**
 * The route table: every route the service serves, in one list. Order does not matter for
 * matching (literal paths shadow parameterised ones); it is the order of README and OpenAPI.
 *
 * @module
 */
import type { Route } from "../router.ts";
import { attributeRoutes } from "./attributes.ts";
import { authRoutes } from "./auth.ts";
import { collectionRoutes } from "./collections.ts";
import { configRoutes } from "./config.ts";
import { contentRoutes } from "./content.ts";
import { integrationRoutes } from "./integrations.ts";
import { loreRoutes } from "./lore.ts";
import { mapRoutes } from "./map.ts";
import { mediaRoutes } from "./media.ts";
import { searchRoutes } from "./search.ts";
import { shareRoutes } from "./share.ts";
import { systemRoutes } from "./system.ts";
import { treeRoutes } from "./tree.ts";

/** All routes. */
export const allRoutes: readonly Route[] = [
  ...loreRoutes,
  ...attributeRoutes,
  ...contentRoutes,
  ...mediaRoutes,
  ...mapRoutes,
  ...treeRoutes,
  ...searchRoutes,
  ...collectionRoutes,
  ...shareRoutes,
  ...configRoutes,
  ...systemRoutes,
  ...authRoutes,
  ...integrationRoutes,
];
