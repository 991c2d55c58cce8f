/**
 * One valid request per Core-backed route, shared by the error-path matrix (error_paths_test.ts)
 * and the fault suite (fault_suite_test.ts). Ids name notes of the sample world, so an unfaulted
 * Core answers each first call with 2xx (the fault suite mangles real answers); where Core is
 * faulted to 404, `on404` says what the route makes of it.
 *
 * @module
 */
import { CHART_PNG, W } from "../../../sims/world.ts";

/** One valid request to a Core-backed route. */
export interface CoreSample {
  method: string;
  path: string;
  init?: RequestInit & { json?: unknown };
  /** Expected status when Core answers 404 to everything (default 404). */
  on404?: number;
}

const png = (): RequestInit => ({
  body: CHART_PNG as Uint8Array<ArrayBuffer>,
  headers: { "content-type": "image/png", "x-host-filename": "m.png" },
});

/** The samples, in route-table order. */
export const samples: CoreSample[] = [
  { method: "GET", path: "/api/lore" },
  { method: "POST", path: "/api/lore", init: { json: { title: "X" } }, on404: 400 },
  { method: "GET", path: `/api/lore/${W.charMira}` },
  { method: "PATCH", path: `/api/lore/${W.charOskar}`, init: { json: { title: "Oskar Venn" } } },
  { method: "DELETE", path: `/api/lore/${W.guideWipChild}` },
  {
    method: "POST",
    path: `/api/lore/${W.charIselde}/attributes`,
    init: { json: { type: "label", name: "x", value: "y" } },
  },
  // an inherited attribute (the template's): Core finds it, the route refuses it (404)
  {
    method: "DELETE",
    path: `/api/lore/${W.eventPact}/attributes?attrId=_template_event_liconClass`,
    on404: 204,
  },
  { method: "GET", path: `/api/lore/${W.charMira}/content` },
  {
    method: "PUT",
    path: `/api/lore/${W.charBrannoch}/content`,
    init: { body: "<p>x</p>", headers: { "content-type": "text/plain" } },
  },
  { method: "GET", path: `/api/lore/${W.charMira}/preview?mode=player` },
  { method: "GET", path: `/api/lore/${W.imgChart}/image` },
  { method: "GET", path: `/api/attachments/${W.attSigil}/image/x.png` },
  { method: "POST", path: `/api/lore/${W.charMira}/relationships` },
  { method: "GET", path: `/api/lore/${W.charMira}/backlinks` },
  { method: "GET", path: `/api/lore/${W.locHarbor}/breadcrumbs` },
  { method: "GET", path: `/api/lore/${W.charMira}/revisions` },
  { method: "GET", path: `/api/lore/${W.charMira}/revisions/${W.revMiraOld}/content` },
  { method: "GET", path: `/api/lore/${W.locChart}/map` },
  { method: "POST", path: `/api/lore/${W.locChart}/map/upload`, init: png() },
  {
    method: "POST",
    path: "/api/lore/move",
    init: { json: { noteId: W.questLedger, newParentId: W.loreRoot, index: 0 } },
  },
  { method: "POST", path: "/api/lore/upload-image", init: png(), on404: 400 },
  { method: "GET", path: "/api/lore/mention-search?q=ar" },
  { method: "GET", path: "/api/lore/note-search?q=ar" },
  { method: "POST", path: "/api/lore/autolink", init: { json: { text: "The Gull's Rest" } } },
  { method: "GET", path: "/api/search?q=harbor&mode=etapi" },
  { method: "GET", path: "/api/quests" },
  { method: "GET", path: "/api/statblocks" },
  { method: "GET", path: "/api/timeline" },
  { method: "GET", path: "/api/share" },
  { method: "PUT", path: "/api/share", init: { json: { noteId: W.guide } } },
  { method: "GET", path: "/api/share/tree" },
  { method: "PUT", path: "/api/config/portal", init: { json: { loreRootNoteId: W.loreRoot } } },
  {
    method: "POST",
    path: `/api/lore/${W.charMira}/copilot/apply`,
    init: { json: { proposal: { targets: [{ kind: "update", targetId: W.charMira }] } } },
  },
];
