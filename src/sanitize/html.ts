/**
 * Allow-list sanitizers for lore HTML read from Core, which stores whatever it was given
 * (`<script>` included); the one entry point for sanitizing HTML.
 *
 * This module composes the steps. The input is first parsed the way a browser parses it
 * (browser_tree.ts): gm-only sections (gm_only.ts) and whatever a rewriter removes go there (a
 * link whose text went leaves the redaction mark of redaction.ts).
 * sanitize-html (htmlparser2) then applies the policy (allow_list.ts): which tags and attributes
 * survive, how image and link URLs are rewritten (url_rules.ts), and, for players, which
 * `gm-only` subtrees disappear. The player view fails closed: when the gm-only checks cannot
 * vouch for the output, it is empty. The exported functions are pure (the only module state,
 * in allow_list.ts, is a cache of options per rewriter and a flag scoped to one synchronous call).
 *
 * Both parsers belong to the HTML engine, loaded on first use (html_engine.ts): the sanitizers
 * throw until `loadHtmlEngine()` has resolved, so their async callers await it first. The URL
 * helpers and rewriters need no engine.
 *
 * @module
 */

import { applyAllowList } from "./allow_list.ts";
import {
  parseLikeBrowser,
  removeElements,
  serializeTree,
  textChunks,
  textWrittenWithin,
} from "./browser_tree.ts";
import { everyGmOnlyTagParsed, hasGmOnlyToken, passesReaderCheck } from "./gm_only.ts";
import { REDACTION_HTML } from "./redaction.ts";
import { editorRewriter, type HtmlRewriter } from "./url_rules.ts";

export type { ElementView } from "./browser_tree.ts";
export {
  attachmentIdFromImageSrc,
  editorRewriter,
  type HtmlRewriter,
  noteIdFromHref,
  noteIdFromImageSrc,
} from "./url_rules.ts";

/**
 * Changes whenever the sanitizers' output for the same input changes; part of every ETag of
 * sanitized HTML, so a browser or cache never keeps an answer an older version produced.
 */
export const SANITIZER_VERSION = "redaction-1";

function sanitize(html: string, rewriter: HtmlRewriter, player: boolean): string {
  // Membership (which text lies inside a gm-only element, inside a link) is decided on the tree
  // a browser builds; the allow-list then runs over that tree's serialization, from which the
  // removed parts are already gone, so no parser disagreement can bring them back.
  const input = typeof html === "string" ? html : "";
  const tree = parseLikeBrowser(input);
  if (player && !everyGmOnlyTagParsed(input, tree)) return ""; // fail closed
  const removes = rewriter.removes?.bind(rewriter);
  const removed = player || removes
    ? removeElements(tree, (el) => {
      if (player && hasGmOnlyToken(el.classes)) return true;
      const verdict = removes?.(el) ?? false;
      return verdict === "redact" ? REDACTION_HTML : verdict;
    })
    : { texts: [], ranges: [] };
  // Text the parser moved out of a removed element was written inside it: fail closed.
  if (textWrittenWithin(tree, removed.ranges)) return "";
  const out = applyAllowList(serializeTree(tree), rewriter, player);
  // The answer is the browser's own reading of the result, so what a client stores, compares
  // or inserts is exactly the tree it will get (and sanitizing it again changes nothing).
  const reparsed = parseLikeBrowser(out);
  if (player && !passesReaderCheck(reparsed, removed.texts, textChunks(tree).join(""))) return "";
  return serializeTree(reparsed);
}

/**
 * Lore ("gm" preview) sanitizer: strict allow-list of structure, text formatting, tables, lists,
 * links and images; `gm-only` content is kept. Deterministic, and idempotent whenever the
 * rewriter accepts its own output (the default one does).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.equal(sanitizeLoreHtml('<p onclick="x()">Hi<script>alert(1)</script></p>'), "<p>Hi</p>");
 * assert.equal(
 *   sanitizeLoreHtml('<img src="api/images/AbC123/map.png">'),
 *   '<img src="/api/images/AbC123/map.png">',
 * );
 * ```
 */
export function sanitizeLoreHtml(html: string, rewriter: HtmlRewriter = editorRewriter): string {
  return sanitize(html, rewriter, false);
}

/**
 * Player sanitizer: the lore rules, plus every element whose class list contains `gm-only` (in
 * any letter case, at any depth, even on otherwise disallowed tags) is removed with all its
 * content. Note-level `#gmOnly`/`#draft` are the caller's concern.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.equal(
 *   sanitizePlayerHtml('<p>Town<span class="gm-only"> (cult base)</span></p>'),
 *   "<p>Town</p>",
 * );
 * ```
 */
export function sanitizePlayerHtml(html: string, rewriter: HtmlRewriter = editorRewriter): string {
  return sanitize(html, rewriter, true);
}
