/** Parser error-path samples of this feature's routes. @module */
import type { ParserSample } from "./parser_sample.ts";

const rawText = "Wren Ashdown keeps the Salt Gate lamp lit.";
const batch = "batch_1767225600000_0a1b2c3d";
const entry = "0b6f1c9e-3d2a-4f7b-9c1e-5a8d2e4f6b10"; // history ids are randomUUID()s

/** One valid request per Parser-backed route of this feature. */
export const samples: ParserSample[] = [
  { method: "POST", path: "/api/brain-dump", init: { json: { rawText, mode: "review" } } },
  // auto is answered from the Parser's stream: its failures map the same way
  { method: "POST", path: "/api/brain-dump", init: { json: { rawText } }, fromStream: true },
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
  { method: "GET", path: `/api/brain-dump/history/${entry}` },
  { method: "GET", path: `/api/brain-dump/${entry}/diffs` },
  { method: "POST", path: "/api/brain-dump/batch", init: { json: { items: [{ rawText }] } } },
  { method: "GET", path: `/api/brain-dump/batch/${batch}` },
  { method: "DELETE", path: `/api/brain-dump/batch/${batch}` },
];
