/**
 * A long note's table of contents: its headings get ids (`h-<words>`, never one of the page's
 * own ids) and a list of links to them goes before the text, so a reader can jump to a part and
 * share a link to it. The headings are those of the note's player HTML, already sanitized: only
 * text a visitor may read becomes a link.
 *
 * @module
 */
import { escapeHtml } from "../lore/preview.ts";
import { htmlToText } from "../sanitize/plain_text.ts";

/** Fewest headings a note needs for a table of contents. */
export const CONTENTS_MIN_HEADINGS = 3;

/** One entry of a table of contents. */
export interface ContentsEntry {
  id: string;
  text: string;
  /** 2 for `<h2>`, 3 for `<h3>`, 4 for `<h4>`. */
  level: number;
}

const HEADING = /<h([2-4])((?:\s[^>]*)?)>([\s\S]*?)<\/h\1>/g;

/**
 * The note's HTML with an id on each `<h2>`–`<h4>` that has none, and the entries of its table of
 * contents (none when it has fewer than {@linkcode CONTENTS_MIN_HEADINGS} headings: the HTML
 * then comes back as it was).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "../sanitize/html_engine.ts";
 * await loadHtmlEngine();
 * const { html, entries } = withContents("<h2>Origins</h2><p>…</p><h2>The Flood</h2><h3>After</h3>");
 * assert.deepEqual(entries.map((e) => [e.id, e.text, e.level]), [
 *   ["h-origins", "Origins", 2],
 *   ["h-the-flood", "The Flood", 2],
 *   ["h-after", "After", 3],
 * ]);
 * assert.match(html, /<h2 id="h-origins">Origins<\/h2>/);
 * ```
 */
export function withContents(contentHtml: string): { html: string; entries: ContentsEntry[] } {
  const headings = [...contentHtml.matchAll(HEADING)];
  if (headings.length < CONTENTS_MIN_HEADINGS) return { html: contentHtml, entries: [] };
  const taken = new Set<string>();
  const entries: ContentsEntry[] = [];
  const html = contentHtml.replace(
    HEADING,
    (whole, level: string, attrs: string, inner: string) => {
      const text = htmlToText(inner, (h) => h).replace(/\s+/g, " ").trim();
      if (!text || /\sid=/.test(attrs)) return whole;
      const base = `h-${slug(text)}`;
      let id = base;
      for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
      taken.add(id);
      entries.push({ id, text, level: Number(level) });
      return `<h${level}${attrs} id="${escapeHtml(id)}">${inner}</h${level}>`;
    },
  );
  return entries.length < CONTENTS_MIN_HEADINGS
    ? { html: contentHtml, entries: [] }
    : { html, entries };
}

/** Lower-case words joined by hyphens, letters and digits of any script kept. */
function slug(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "part";
}
