/** Parser error-path samples of this feature's routes. @module */
import type { ParserSample } from "./parser_sample.ts";

const turn = { json: { transcript: [{ role: "user", content: "What do we know?" }] } };

/** One valid request per Parser-backed route of this feature. */
export const samples: ParserSample[] = [
  { method: "POST", path: "/api/lore/wCharMira001/copilot/chat", init: turn, fromStream: true },
  // the context status event is sent before the Parser is called
  { method: "POST", path: "/api/lore/wCharMira001/copilot/stream", init: turn, streamsFirst: true },
];
