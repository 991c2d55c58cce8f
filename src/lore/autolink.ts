/**
 * Finding lore titles in free text. A title index is compiled once into a trie of case-folded
 * code points; matching walks the text once, trying the trie only where a word may start, so the
 * cost grows with the text, not with the number of titles.
 *
 * Rules: case-insensitive; whole words (no letter, digit or combining mark directly before or
 * after a match); any whitespace run in the text matches the single space of a title; titles of
 * fewer than 3 characters are ignored; of overlapping matches the longest wins, then the earliest;
 * each note is reported once, at its first chosen occurrence, with the text exactly as written.
 *
 * @module
 */

/** A lore note's title, as the index holds it. */
export interface AutolinkTitle {
  noteId: string;
  title: string;
}

/** One match: `term` is the text as it appears in the input. */
export interface AutolinkMatch {
  term: string;
  noteId: string;
  title: string;
}

/** A compiled title index. */
export interface AutolinkMatcher {
  /** Matches in order of appearance. */
  match(text: string): AutolinkMatch[];
  /** Number of distinct titles indexed. */
  readonly size: number;
  /** Roughly what the index holds on the heap (for a cache's byte bound). */
  readonly bytes: number;
}

/** Titles shorter than this (in characters) would match too much noise. */
export const MIN_TITLE_CHARS = 3;

const SPACE = 0x20;

/** Heap cost of one trie node with its map entry, as measured on V8 (about 155 bytes). */
const NODE_BYTES = 160;
/** Heap cost of one indexed title besides its strings. */
const TITLE_BYTES = 64;

interface TrieNode {
  next?: Map<number, TrieNode>;
  /** The note whose title ends here (smallest noteId when titles collide). */
  note?: AutolinkTitle;
}

/**
 * Compiles a matcher for a title index.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const m = compileAutolink([{ noteId: "n1", title: "Ashford Keep" }]);
 * assert.deepEqual(
 *   m.match("We rode to ASHFORD  keep."),
 *   [{ term: "ASHFORD  keep", noteId: "n1", title: "Ashford Keep" }],
 * );
 * ```
 */
export function compileAutolink(titles: readonly AutolinkTitle[]): AutolinkMatcher {
  const root: TrieNode = {};
  let size = 0;
  let bytes = NODE_BYTES;
  for (const entry of titles) {
    const key = foldTitleKey(entry.title);
    if (key.length < MIN_TITLE_CHARS) continue;
    let node = root;
    for (const cp of key) {
      node.next ??= new Map();
      let child = node.next.get(cp);
      if (!child) {
        node.next.set(cp, child = {});
        bytes += NODE_BYTES;
      }
      node = child;
    }
    if (!node.note) {
      size++;
      bytes += TITLE_BYTES + (entry.title.length + entry.noteId.length) * 2;
    }
    if (!node.note || entry.noteId < node.note.noteId) node.note = entry;
  }
  return { size, bytes, match: (text) => matchText(root, text) };
}

/** Title → folded code points, whitespace trimmed and collapsed to one space. */
function foldTitleKey(title: string): number[] {
  const out: number[] = [];
  for (const ch of title.trim()) {
    const cp = foldCodePoint(ch.codePointAt(0)!);
    if (cp === SPACE && out[out.length - 1] === SPACE) continue;
    out.push(cp);
  }
  return out;
}

interface Candidate {
  start: number;
  end: number;
  note: AutolinkTitle;
}

function matchText(root: TrieNode, text: string): AutolinkMatch[] {
  const { cps, offsets, word } = scan(text);
  const n = cps.length;
  const candidates: Candidate[] = [];
  for (let s = 0; s < n; s++) {
    if (cps[s] === SPACE || (word[s] && s > 0 && word[s - 1])) continue;
    let node = root;
    let i = s;
    while (i < n) {
      const child = node.next?.get(cps[i]);
      if (!child) break;
      node = child;
      if (cps[i] === SPACE) { while (i < n && cps[i] === SPACE) i++; }
      else i++;
      if (node.note && (i === n || !word[i - 1] || !word[i])) {
        candidates.push({ start: s, end: i, note: node.note });
      }
    }
  }
  const chosen = chooseNonOverlapping(candidates, n);
  const seen = new Set<string>();
  const out: AutolinkMatch[] = [];
  for (const c of chosen) {
    if (seen.has(c.note.noteId)) continue;
    seen.add(c.note.noteId);
    out.push({
      term: text.slice(offsets[c.start], offsets[c.end]),
      noteId: c.note.noteId,
      title: c.note.title,
    });
  }
  return out;
}

/** Longest first, then earliest; a candidate touching a chosen span is dropped. */
function chooseNonOverlapping(candidates: Candidate[], n: number): Candidate[] {
  candidates.sort((a, b) => (b.end - b.start) - (a.end - a.start) || a.start - b.start);
  const taken = new Uint8Array(n);
  const chosen: Candidate[] = [];
  for (const c of candidates) {
    let free = true;
    for (let i = c.start; i < c.end && free; i++) free = taken[i] === 0;
    if (!free) continue;
    taken.fill(1, c.start, c.end);
    chosen.push(c);
  }
  return chosen.sort((a, b) => a.start - b.start);
}

/** The text as folded code points, their UTF-16 offsets (plus the end) and word-char flags. */
function scan(text: string): { cps: Uint32Array; offsets: Uint32Array; word: Uint8Array } {
  const cps = new Uint32Array(text.length);
  const offsets = new Uint32Array(text.length + 1);
  const word = new Uint8Array(text.length);
  let n = 0;
  for (let off = 0; off < text.length;) {
    const cp = text.codePointAt(off)!;
    cps[n] = foldCodePoint(cp);
    word[n] = isWordCodePoint(cp) ? 1 : 0;
    offsets[n++] = off;
    off += cp > 0xffff ? 2 : 1;
  }
  offsets[n] = text.length;
  return {
    cps: cps.subarray(0, n),
    offsets: offsets.subarray(0, n + 1),
    word: word.subarray(0, n),
  };
}

// Memo of non-ASCII code point properties; bounded so hostile text cannot grow it without limit.
const CACHE_MAX = 4096;
const foldCache = new Map<number, number>();
const wordCache = new Map<number, boolean>();
const WHITESPACE = /\s/u;
const WORD = /[\p{L}\p{N}\p{M}]/u;

/** Lower case when that stays one code point (so offsets map 1:1); any whitespace → space. */
function foldCodePoint(cp: number): number {
  if (cp < 0x80) {
    if (cp >= 0x41 && cp <= 0x5a) return cp + 32;
    return cp === 0x09 || cp === 0x0a || cp === 0x0d || cp === 0x0c || cp === 0x0b ? SPACE : cp;
  }
  let folded = foldCache.get(cp);
  if (folded === undefined) {
    const ch = String.fromCodePoint(cp);
    const lower = [...ch.toLowerCase()];
    folded = WHITESPACE.test(ch) ? SPACE : lower.length === 1 ? lower[0].codePointAt(0)! : cp;
    if (foldCache.size >= CACHE_MAX) foldCache.clear();
    foldCache.set(cp, folded);
  }
  return folded;
}

function isWordCodePoint(cp: number): boolean {
  if (cp < 0x80) {
    return (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
  }
  let w = wordCache.get(cp);
  if (w === undefined) {
    if (wordCache.size >= CACHE_MAX) wordCache.clear();
    wordCache.set(cp, w = WORD.test(String.fromCodePoint(cp)));
  }
  return w;
}
