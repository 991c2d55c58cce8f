/**
 * The player view's gm-only rules: which class marks a GM-only section, and the two fail-closed
 * checks around its removal. Before sanitizing, every start tag written with that class must have
 * become an element of the browser's tree (else the writer's intent is unknowable); after it, the
 * output, read again the browser's way, must show no gm-only element and none of the removed
 * text. When either check fails the player sanitizer answers with nothing.
 *
 * Matching fails closed too: any Unicode whitespace splits the class list and any letter case
 * matches, even though browsers and Core's `.gm-only` selector are case-sensitive.
 *
 * @module
 */

import {
  type BrowserTree,
  countElements,
  someElement,
  startTags,
  textChunks,
} from "./browser_tree.ts";

const GM_ONLY_CLASS = "gm-only";

/** True when a class list (already split into tokens) contains `gm-only`, in any letter case. */
export function hasGmOnlyToken(classes: readonly string[]): boolean {
  return classes.some((token) => token.toLowerCase() === GM_ONLY_CLASS);
}

/**
 * Fail closed on `gm-only` in a raw `class` attribute value (undefined: no attribute): any
 * Unicode whitespace splits, and any letter case matches.
 */
export function classIsGmOnly(value: string | undefined): boolean {
  if (value === undefined) return false;
  return hasGmOnlyToken(value.split(/\s+/));
}

/**
 * True when every start tag written with a gm-only class became an element of the browser's
 * tree. A tag the browser drops (`<tr class="gm-only">` outside a table) leaves the text the
 * writer meant to hide unmarked; the writer's intent is then unknowable.
 */
export function everyGmOnlyTagParsed(html: string, tree: BrowserTree): boolean {
  if (!/gm-only/i.test(html)) return true;
  const parsed = new Set<number | undefined>();
  countElements(tree, (el) => hasGmOnlyToken(el.classes) && !!parsed.add(el.startOffset));
  return startTags(html).every((tag) =>
    !hasGmOnlyToken((tag.attr("class") ?? "").split(/\s+/)) || parsed.has(tag.startOffset)
  );
}

const squash = (text: string) => text.replace(/\s+/g, " ").trim();

/**
 * The player view's last line of defence: the output, parsed again the browser's way, has no
 * gm-only element and shows none of the removed text (unless the kept text has it too, i.e. the
 * writer repeated it outside the secret part). Fails closed: the caller then shows nothing.
 */
export function passesReaderCheck(
  reparsed: BrowserTree,
  removed: readonly string[],
  kept: string,
): boolean {
  if (someElement(reparsed, (el) => hasGmOnlyToken(el.classes))) return false;
  const shown = squash(textChunks(reparsed).join(""));
  const keptText = squash(kept);
  return removed.every((chunk) => {
    const text = squash(chunk);
    return text === "" || !shown.includes(text) || keptText.includes(text);
  });
}
