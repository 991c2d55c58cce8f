/** Parser error-path samples of this feature's routes. @module */
import type { ParserSample } from "./parser_sample.ts";

const rawText = "Wren Ashdown keeps the Salt Gate lamp lit.";
const batch = "batch_1767225600000_0a1b2c3d";

/** One valid request per Parser-backed route of this feature. */
export const samples: ParserSample[] = [
  { method: "POST", path: "/api/brain-dump", init: { json: { rawText, mode: "review" } } },
  { method: "POST", path: "/api/brain-dump/stream", init: { json: { rawText } } },
  {
    method: "POST",
    path: "/api/brain-dump/commit",
    init: {
      json: {
        rawText,
        approvedEntities: [{ title: "Wren Ashdown", type: "character", action: "create" }],
      },
    },
  },
  { method: "GET", path: "/api/brain-dump/history" },
  { method: "GET", path: "/api/brain-dump/history/cmissing0000000000000000" },
  { method: "GET", path: "/api/brain-dump/cmissing0000000000000000/diffs" },
  { method: "POST", path: "/api/brain-dump/batch", init: { json: { items: [{ rawText }] } } },
  { method: "GET", path: `/api/brain-dump/batch/${batch}` },
  { method: "DELETE", path: `/api/brain-dump/batch/${batch}` },
];
