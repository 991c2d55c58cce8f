/** Part 3 of the test task's parts: its share of the repository's test files (see parts.ts). */
import { loadPart } from "./parts.ts";

await loadPart(import.meta.url);
