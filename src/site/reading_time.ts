/**
 * How long a note takes to read, from the words a visitor sees in its content: "4 min read" in
 * the note's meta line. Short notes say nothing (a minute is no news).
 *
 * @module
 */
import { decodeHtmlEntities } from "../sanitize/plain_text.ts";

/** Words an adult reads in a minute (silent reading of prose). */
export const WORDS_PER_MINUTE = 220;

/** Fewest words for which a reading time is shown. */
export const READING_TIME_MIN_WORDS = 150;

// A tag of the serialized player HTML: attribute values are double-quoted and may hold `>`.
const TAG = /<(?:[^>"]|"[^"]*")*>/g;
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;

/**
 * The words of player HTML a visitor reads: text only (no tag, no attribute such as an image's
 * alt text), character references decoded; a word is a run of letters and digits.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(wordCount('<p>Salt &amp; <b>tar</b>, the sailor’s lot.</p><img alt="a > b c">'), 5);
 * ```
 */
export function wordCount(contentHtml: string): number {
  // a tag is a word break: "<p>a</p><p>b</p>" is two words
  return decodeHtmlEntities(contentHtml.replace(TAG, " ")).match(WORD)?.length ?? 0;
}

/**
 * "N min read" for a note's player HTML (at least one minute), or null below
 * {@linkcode READING_TIME_MIN_WORDS} words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const words = (n: number) => `<p>${"word ".repeat(n)}</p>`;
 * assert.equal(readingTime(words(149)), null);
 * assert.equal(readingTime(words(150)), "1 min read");
 * assert.equal(readingTime(words(880)), "4 min read");
 * ```
 */
export function readingTime(contentHtml: string): string | null {
  const words = wordCount(contentHtml);
  if (words < READING_TIME_MIN_WORDS) return null;
  return `${Math.max(1, Math.round(words / WORDS_PER_MINUTE))} min read`;
}
