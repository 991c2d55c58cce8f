/**
 * Core's search lexer (`apps/server/src/services/search/services/lex.ts`), the one reading of a
 * search query shared by the service (checking caller queries, `caller_query.ts`) and the Core
 * double (`sims/core_store.ts`), so the two cannot drift apart. It follows Core step by step,
 * quirks included: lowercased, backslash escapes, quotes, full text before the first `#`/`~`/
 * `note.`, expression words split where operator characters begin or end, commas dropped unless
 * they begin an operator run, only a space separating words (a tab or newline stays in one).
 * Token positions are left out: nothing here reads them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lexSearch } from "./search_lex.ts";
 * const lex = lexSearch("Dragon #race=half-elf");
 * assert.deepEqual(lex.fulltext.map((t) => t.token), ["dragon"]);
 * assert.deepEqual(lex.expression.map((t) => t.token), ["#race", "=", "half", "-", "elf"]);
 * ```
 *
 * @module
 */

/** One word of a query as Core's lexer produces it; `inQuotes` tells a quoted literal from syntax. */
export interface SearchToken {
  token: string;
  inQuotes: boolean;
}

/** What Core's lexer makes of a query, plus what it silently throws away. */
export interface SearchLex {
  /** Words before the first `#`, `~` or `note.`. */
  fulltext: SearchToken[];
  /** Words from there on. */
  expression: SearchToken[];
  /** `"="` when the query began with `=word` (Core's exact-match mode), else `""`. */
  leadingOperator: string;
  /**
   * The unquoted word glued to the first `#`/`~` (`(` in `(#a or #b)`), which Core overwrites
   * without a word; null when there was none. Core's own result has no such field: the double
   * uses it to refuse the query rather than answer what Core silently answers.
   */
  discarded: string | null;
}

const OPERATOR_CHARS = new Set(["=", "*", ">", "<", "!", "-", "+", "%", ","]);
const QUOTES = new Set(['"', "'", "`"]);

/** The lexer's running state: the word being read, the open quote, which half it is in. */
interface LexState {
  word: string;
  quote: string | null;
  fulltextEnded: boolean;
  out: SearchLex;
}

/**
 * Reads `query` as Core's search lexer does (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lexSearch } from "./search_lex.ts";
 * assert.deepEqual(lexSearch("#label*=*'Text'").expression, [
 *   { token: "#label", inQuotes: false },
 *   { token: "*=*", inQuotes: false },
 *   { token: "text", inQuotes: true },
 * ]);
 * ```
 */
export function lexSearch(query: string): SearchLex {
  let str = query.toLowerCase();
  const out: SearchLex = { fulltext: [], expression: [], leadingOperator: "", discarded: null };
  // `=word` asks for exact matches; the `=` is not part of the first word (`==x`, `= x` are)
  if (/^=[^= ]/.test(str)) {
    out.leadingOperator = "=";
    str = str.slice(1);
  }
  const s: LexState = { word: "", quote: null, fulltextEnded: false, out };
  for (let i = 0; i < str.length; i++) {
    const ch = str[i];
    if (ch === "\\") {
      // an escape outside or inside quotes; a trailing backslash is itself
      s.word += i + 1 < str.length ? str[++i] : ch;
    } else if (QUOTES.has(ch)) {
      readQuote(s, ch);
    } else if (s.quote !== null || !readSyntax(s, ch, str[i + 1])) {
      // Core drops commas everywhere else, quoted ones too
      if (ch !== ",") s.word += ch;
    }
  }
  // an unclosed quote still ends its word, but an empty one makes no token (unlike a closed '')
  finish(s);
  return out;
}

/** Ends the current word into the half the lexer is in; an empty word only when `evenEmpty`. */
function finish(s: LexState, evenEmpty = false): void {
  if (s.word === "" && !evenEmpty) return;
  const half = s.fulltextEnded ? s.out.expression : s.out.fulltext;
  half.push({ token: s.word, inQuotes: s.quote !== null });
  s.word = "";
}

function lastIsOperator(s: LexState): boolean {
  return s.word.length > 0 && OPERATOR_CHARS.has(s.word[s.word.length - 1]);
}

/** A quote opens at a word's start or after an operator character, in either half. */
function readQuote(s: LexState, ch: string): void {
  if (s.quote === null) {
    if (s.word === "" || lastIsOperator(s)) {
      finish(s);
      s.quote = ch;
    } else {
      s.word += ch; // a quote inside a word is literal (d'Artagnan)
    }
  } else if (s.quote === ch) {
    finish(s, true); // '' is an empty value
    s.quote = null;
  } else {
    s.word += ch; // another kind of quote inside quotes
  }
}

/**
 * Handles an unquoted character that is syntax: true when it was consumed, false when it is an
 * ordinary character of the word (the caller still drops a comma).
 */
function readSyntax(s: LexState, ch: string, next: string | undefined): boolean {
  if (!s.fulltextEnded && s.word === "note" && ch === "." && next !== undefined) {
    s.fulltextEnded = true; // falls through: the "." is then a token of its own
  }
  if (ch === "#" || ch === "~") {
    if (s.fulltextEnded) finish(s);
    else if (s.word !== "") s.out.discarded = s.word; // Core overwrites it without a word
    s.fulltextEnded = true;
    s.word = ch;
    return true;
  }
  if ((s.word === "#" || s.word === "~") && ch === "!") {
    s.word += ch; // negation belongs to the attribute: `#!label`
    return true;
  }
  if (ch === " ") {
    finish(s);
    return true;
  }
  if (s.fulltextEnded && (ch === "(" || ch === ")" || ch === ".")) {
    finish(s);
    s.word = ch;
    finish(s);
    return true;
  }
  if (
    s.fulltextEnded && s.word !== "#!" && s.word !== "~!" &&
    lastIsOperator(s) !== OPERATOR_CHARS.has(ch)
  ) {
    // an operator run begins or ends; a comma beginning one is kept (`a ,b` → `,`)
    finish(s);
    s.word = ch;
    return true;
  }
  return false;
}
