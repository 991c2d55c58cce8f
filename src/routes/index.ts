/**
 * The route table: every route the service serves, in one list. Order does not matter for
 * matching (literal paths shadow parameterised ones, and among parameterised ones the leftmost
 * literal wins; rows no request could tell apart are refused at start-up); it is the order of
 * the API reference (docs/api.md), `--print-routes` and the OpenAPI document.
 *
 * @module
 */
import type { Route } from "../api/router.ts";
import { relationshipGraphRoutes } from "./ai_graph.ts";
import { noteRelationRoutes } from "./ai_note_relations.ts";
import { relationshipRoutes } from "./ai_relationships.ts";
import { aiScanRoutes } from "./ai_scans.ts";
import { attributeRoutes } from "./attributes.ts";
import { authRoutes } from "./auth.ts";
import { brainDumpBatchRoutes } from "./brain_dump_batches.ts";
import { brainDumpDiffRoutes, brainDumpHistoryRoutes } from "./brain_dump_history.ts";
import { brainDumpRunRoutes } from "./brain_dump_runs.ts";
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
import { ragRoutes } from "./rag.ts";
import { searchRoutes } from "./search.ts";
import { shareRoutes } from "./share.ts";
import { siteRoutes } from "./site.ts";
import { siteCardRoutes } from "./site_card.ts";
import { siteEdgeRoutes } from "./site_edges.ts";
import { siteUnlockRoutes } from "./site_unlock.ts";
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
  ...brainDumpRunRoutes,
  ...brainDumpHistoryRoutes,
  ...brainDumpBatchRoutes,
  ...brainDumpDiffRoutes,
  ...aiScanRoutes,
  ...relationshipRoutes,
  ...noteRelationRoutes,
  ...relationshipGraphRoutes,
  ...ragRoutes,
  ...copilotRoutes,
  ...collectionRoutes,
  ...shareRoutes,
  ...publicRoutes,
  ...siteRoutes,
  ...siteCardRoutes,
  ...siteEdgeRoutes,
  ...siteUnlockRoutes,
  ...configRoutes,
  ...systemRoutes,
  ...authRoutes,
  ...integrationRoutes,
  ...importRoutes,
  ...notificationRoutes,
  ...usageRoutes,
];
