/**
 * HTML as a browser sees it: a spec-compliant HTML5 parser (parse5) builds the tree a browser
 * builds when the fragment is inserted into a `<div>` of a page body — mis-nesting, foster
 * parenting, `template`, `select`, `object`, tables and foreign content included. Decisions about
 * what a reader may see (GM-only sections, links whose text names a hidden note) are made on
 * this tree, never on a lenient tokenizer's idea of where an element ends.
 *
 * Parsing, tokenizing and serializing need the loaded engine (html_engine.ts): before it is
 * loaded they throw.
 *
 * @module
 */
import { htmlEngine, type TagToken, type Tree } from "./html_engine.ts";

/** A parsed fragment; see {@linkcode parseLikeBrowser}. */
export type BrowserTree = Tree["documentFragment"];

/** Read-only view of one element handed to removal predicates. */
export interface ElementView {
  /** Lower-case local name (`a`, `section`, `svg`, …). */
  readonly tagName: string;
  /** Attribute value, or undefined when absent. */
  attr(name: string): string | undefined;
  /** Class tokens, split on any whitespace, as written. */
  readonly classes: readonly string[];
  /** All text inside the element (template contents included), concatenated. */
  readonly text: string;
  /**
   * Offset of the start tag in the source. Elements a parser re-creates (formatting elements
   * reopened after mis-nesting) share their original's offset.
   */
  readonly startOffset: number | undefined;
}

/** A start tag as written in the source: name, attributes and offset. */
export interface SourceTag {
  readonly tagName: string;
  attr(name: string): string | undefined;
  readonly startOffset: number;
}

// The context element: a <div> in the body of a standards-mode document, which is where our
// HTML ends up (the public page's <article>, or a client's innerHTML). Built on first use, once
// the engine is loaded.
let context: Tree["element"] | undefined;

function contextElement(): Tree["element"] {
  if (context) return context;
  const doc = htmlEngine().parse5.parse(
    "<!DOCTYPE html><html><head></head><body><div></div></body></html>",
  );
  const html = doc.childNodes.find((n) => n.nodeName === "html") as Tree["element"];
  const body = html.childNodes.find((n) => n.nodeName === "body") as Tree["element"];
  return context = body.childNodes[0] as Tree["element"];
}

/**
 * Parses an HTML fragment exactly as a browser parses it inside a `<div>` (scripting enabled,
 * as in every browser that renders our pages).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * const tree = parseLikeBrowser('<div class="gm-only"><object></div>secret</object></div>');
 * // the text "secret" is inside the gm-only div, as in Chromium
 * assert.equal(serializeTree(tree), '<div class="gm-only"><object>secret</object></div>');
 * ```
 */
export function parseLikeBrowser(html: string): BrowserTree {
  return htmlEngine().parse5.parseFragment(contextElement(), html, {
    scriptingEnabled: true,
    sourceCodeLocationInfo: true,
  });
}

/**
 * Every start tag the tokenizer finds reading the source as plain markup — including tags the
 * tree builder later ignores (`<tr>` outside a table) and, erring on the side of more, tags that
 * a raw-text element (`<script>`, `<xmp>`) would turn into text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.deepEqual(startTags('<tr class="x">a').map((t) => t.tagName), ["tr"]);
 * ```
 */
export function startTags(html: string): SourceTag[] {
  const tags: SourceTag[] = [];
  const ignore = () => {};
  const tokenizer = new (htmlEngine().parse5.Tokenizer)({ sourceCodeLocationInfo: true }, {
    onStartTag(token: TagToken) {
      const attrs = token.attrs;
      tags.push({
        tagName: token.tagName,
        attr: (name) => attrs.find((a) => a.name === name)?.value,
        startOffset: token.location?.startOffset ?? -1,
      });
    },
    onEndTag: ignore,
    onComment: ignore,
    onDoctype: ignore,
    onEof: ignore,
    onCharacter: ignore,
    onNullCharacter: ignore,
    onWhitespaceCharacter: ignore,
  });
  tokenizer.write(html, true);
  return tags;
}

/**
 * The tree serialized back to HTML.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.equal(serializeTree(parseLikeBrowser("<p>a<p>b")), "<p>a</p><p>b</p>");
 * ```
 */
export function serializeTree(tree: BrowserTree): string {
  return htmlEngine().parse5.serialize(tree);
}

function isElement(node: Tree["node"]): node is Tree["element"] {
  return "tagName" in node;
}

/** Children of an element, plus the contents of a `<template>`. */
function childrenOf(node: Tree["parentNode"]): Tree["childNode"][] {
  const content = (node as Partial<Tree["template"]>).content;
  return content ? [...node.childNodes, ...content.childNodes] : node.childNodes;
}

/**
 * Every text node's value under `node`, in document order (template contents included).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.deepEqual(textChunks(parseLikeBrowser("<p>a<b>b</b></p>")), ["a", "b"]);
 * ```
 */
export function textChunks(node: Tree["parentNode"]): string[] {
  const out: string[] = [];
  const walk = (n: Tree["parentNode"]) => {
    for (const child of childrenOf(n)) {
      if (child.nodeName === "#text") out.push((child as Tree["textNode"]).value);
      else if ("childNodes" in child) walk(child as Tree["parentNode"]);
    }
  };
  walk(node);
  return out;
}

function viewOf(el: Tree["element"]): ElementView {
  let text: string | undefined;
  let classes: string[] | undefined;
  const attr = (name: string) => el.attrs.find((a) => a.name === name)?.value;
  return {
    tagName: el.tagName,
    startOffset: el.sourceCodeLocation?.startTag?.startOffset ?? el.sourceCodeLocation?.startOffset,
    attr,
    get classes() {
      return classes ??= (attr("class") ?? "").split(/\s+/).filter(Boolean);
    },
    get text() {
      return text ??= textChunks(el).join("");
    },
  };
}

/** What {@linkcode removeElements} took out. */
export interface Removal {
  /** Text of the removed subtrees, one entry per text node. */
  texts: string[];
  /** Source ranges `[start, end)` of the removed elements (where the parser recorded them). */
  ranges: (readonly [number, number])[];
}

/**
 * Removes, in place, every element for which `doomed` is true together with everything inside
 * it (a removed element's descendants are not visited). When `doomed` answers with HTML instead,
 * that fragment stands in the removed element's place, as a word of its own: a letter or digit
 * right beside it gets a space between. The stand-in is not in the source, so it has no source
 * location (nothing can take it for text written inside a removed element).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * const tree = parseLikeBrowser('<p>Town<span class="gm-only"> (cult)</span></p>');
 * assert.deepEqual(
 *   removeElements(tree, (el) => el.classes.includes("gm-only")).texts,
 *   [" (cult)"],
 * );
 * assert.equal(serializeTree(tree), "<p>Town</p>");
 * const linked = parseLikeBrowser("<p>Trust<a> Mara</a>, not<a>Jon</a>.</p>");
 * removeElements(linked, (el) => el.tagName === "a" && "<i>—</i>");
 * assert.equal(serializeTree(linked), "<p>Trust <i>—</i>, not <i>—</i>.</p>");
 * ```
 */
export function removeElements(
  tree: BrowserTree,
  doomed: (el: ElementView) => boolean | string,
): Removal {
  const removal: Removal = { texts: [], ranges: [] };
  const walk = (parent: Tree["parentNode"]) => {
    const content = (parent as Partial<Tree["template"]>).content;
    if (content) walk(content);
    const placed = new Set<Tree["childNode"]>();
    parent.childNodes = parent.childNodes.flatMap((child) => {
      if (!isElement(child)) return [child];
      const verdict = doomed(viewOf(child));
      if (verdict === false) {
        walk(child);
        return [child];
      }
      removal.texts.push(...textChunks(child));
      const at = child.sourceCodeLocation;
      if (at) removal.ranges.push([at.startOffset, at.endOffset]);
      if (verdict === true) return [];
      const nodes = standIn(verdict, parent);
      nodes.forEach((node) => placed.add(node));
      return nodes;
    });
    if (placed.size > 0) spaceStandIns(parent.childNodes, placed);
  };
  walk(tree);
  return removal;
}

function standIn(fragment: string, parent: Tree["parentNode"]): Tree["childNode"][] {
  const nodes = parseLikeBrowser(fragment).childNodes;
  const unplace = (node: Tree["childNode"]) => {
    delete (node as { sourceCodeLocation?: unknown }).sourceCodeLocation;
    if ("childNodes" in node) (node.childNodes as Tree["childNode"][]).forEach(unplace);
  };
  for (const node of nodes) {
    unplace(node);
    node.parentNode = parent;
  }
  return nodes;
}

const WORD_END = /[\p{L}\p{N}]$/u;
const WORD_START = /^[\p{L}\p{N}]/u;

/** A space between each stand-in and a letter or digit of a sibling text right beside it. */
function spaceStandIns(
  children: Tree["childNode"][],
  standIns: ReadonlySet<Tree["childNode"]>,
): void {
  children.forEach((node, i) => {
    if (!standIns.has(node)) return;
    const before = children[i - 1];
    const after = children[i + 1];
    if (before?.nodeName === "#text" && !standIns.has(before)) {
      const text = before as Tree["textNode"];
      if (WORD_END.test(text.value)) text.value += " ";
    }
    if (after?.nodeName === "#text" && !standIns.has(after)) {
      const text = after as Tree["textNode"];
      if (WORD_START.test(text.value)) text.value = ` ${text.value}`;
    }
  });
}

/**
 * Whether a non-blank text node of the tree was written (partly) inside one of the source ranges: text
 * the parser moved out of a removed element (foster parenting out of a `<table>`), so it would
 * show although the writer put it inside.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * const tree = parseLikeBrowser('<table class="gm-only">secret</table>');
 * const { ranges } = removeElements(tree, (el) => el.tagName === "table");
 * assert.equal(textWrittenWithin(tree, ranges), true); // "secret" was fostered out of the table
 * ```
 */
export function textWrittenWithin(
  tree: BrowserTree,
  ranges: readonly (readonly [number, number])[],
): boolean {
  if (ranges.length === 0) return false;
  // Overlap, not just the start: fostered text merges into a text node that began earlier.
  const inside = (node: Tree["textNode"]) => {
    const at = node.sourceCodeLocation;
    return !!at && node.value.trim() !== "" &&
      ranges.some(([start, end]) => at.startOffset < end && at.endOffset > start);
  };
  const walk = (parent: Tree["parentNode"]): boolean =>
    childrenOf(parent).some((child) =>
      child.nodeName === "#text"
        ? inside(child as Tree["textNode"])
        : isElement(child) && walk(child)
    );
  return walk(tree);
}

/**
 * Whether any element of the tree satisfies `test` (template contents included).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.equal(someElement(parseLikeBrowser("<p><b>x</b></p>"), (el) => el.tagName === "b"), true);
 * ```
 */
export function someElement(tree: BrowserTree, test: (el: ElementView) => boolean): boolean {
  return countElements(tree, test) > 0;
}

/**
 * How many elements of the tree satisfy `test` (nested ones and template contents included).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.equal(
 *   countElements(parseLikeBrowser("<p><b>x</b><b>y</b></p>"), (el) => el.tagName === "b"),
 *   2,
 * );
 * ```
 */
export function countElements(tree: BrowserTree, test: (el: ElementView) => boolean): number {
  let count = 0;
  const walk = (parent: Tree["parentNode"]): void => {
    for (const child of childrenOf(parent)) {
      if (!isElement(child)) continue;
      if (test(viewOf(child))) count++;
      walk(child);
    }
  };
  walk(tree);
  return count;
}
