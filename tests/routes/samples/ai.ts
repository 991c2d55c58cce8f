/** Parser error-path samples of this feature's routes. @module */
import { W } from "../../../sims/world.ts";
import type { ParserSample } from "./parser_sample.ts";

/** One valid request per Parser-backed route of this feature. */
export const samples: ParserSample[] = [
  { method: "POST", path: "/api/ai/consistency", init: { json: { noteIds: [W.charMira] } } },
  { method: "GET", path: "/api/ai/gaps" },
  { method: "POST", path: "/api/ai/gaps" },
  { method: "POST", path: "/api/ai/relationships", init: { json: { text: "Mira trusts Oskar" } } },
  {
    method: "PUT",
    path: "/api/ai/relationships",
    init: {
      json: { sourceNoteId: W.charMira, relations: [{ targetNoteId: W.charOskar, type: "ally" }] },
    },
  },
  // Core's part (the note's relations) still answers; suggestions are marked unavailable
  { method: "POST", path: `/api/lore/${W.charMira}/relationships`, degradesTo: 200 },
  { method: "GET", path: "/api/lore/abcdEFGH1234/graph?depth=2" },
  { method: "GET", path: "/api/lore/abcdEFGH1234/relationship-history" },
  { method: "GET", path: "/api/rag?text=tides&topK=5" },
  { method: "POST", path: "/api/rag", init: { json: { text: "tides" } } },
  { method: "GET", path: "/api/search?q=who%20keeps%20the%20lamps&mode=rag" },
  // Core's title matches still answer within the budget
  { method: "GET", path: "/api/lore/mention-search?q=ma", degradesTo: 200 },
];
