/** Parser error-path samples of this feature's routes. @module */
import type { ParserSample } from "./parser_sample.ts";

/** One valid request per Parser-backed route of this feature. */
export const samples: ParserSample[] = [];
