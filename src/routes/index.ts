/**
 * The route table: every route the service serves, in one list. Order does not matter for
 * matching (literal paths shadow parameterised ones, and among parameterised ones the leftmost
 * literal wins; rows no request could tell apart are refused at start-up); it is the order of
 * the API reference (docs/api.md), `--print-routes` and the OpenAPI document.
 *
 * @module
 */
import type { Route } from "../api/router.ts";
import { aiRoutes } from "./ai.ts";
import { attributeRoutes } from "./attributes.ts";
import { authRoutes } from "./auth.ts";
import { brainDumpRoutes } from "./brain_dump.ts";
import { collectionRoutes } from "./collections.ts";
import { configRoutes } from "./config.ts";
import { contentRoutes } from "./content.ts";
import { copilotRoutes } from "./copilot.ts";
import { importRoutes } from "./imports.ts";
import { integrationRoutes } from "./integrations.ts";
import { loreRoutes } from "./lore.ts";
import { mapRoutes } from "./map.ts";
import { mediaRoutes } from "./media.ts";
import { notificationRoutes } from "./notifications.ts";
import { publicRoutes } from "./public.ts";
import { searchRoutes } from "./search.ts";
import { shareRoutes } from "./share.ts";
import { siteRoutes } from "./site.ts";
import { siteEdgeRoutes } from "./site_edges.ts";
import { systemRoutes } from "./system.ts";
import { treeRoutes } from "./tree.ts";
import { usageRoutes } from "./usage.ts";

/** All routes. */
export const allRoutes: readonly Route[] = [
  ...loreRoutes,
  ...attributeRoutes,
  ...contentRoutes,
  ...mediaRoutes,
  ...mapRoutes,
  ...treeRoutes,
  ...searchRoutes,
  ...brainDumpRoutes,
  ...aiRoutes,
  ...copilotRoutes,
  ...collectionRoutes,
  ...shareRoutes,
  ...publicRoutes,
  ...siteRoutes,
  ...siteEdgeRoutes,
  ...configRoutes,
  ...systemRoutes,
  ...authRoutes,
  ...integrationRoutes,
  ...importRoutes,
  ...notificationRoutes,
  ...usageRoutes,
];
