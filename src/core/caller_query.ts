/**
 * Checking a Core search query the caller wrote (`GET /api/lore?q=`, `GET /api/search?q=`) for
 * the mistakes Core does not report as such: it fails with a 500 instead. Core reads the query
 * with its own lexer, so this module reads it the same way: lowercased,
 * backslash escapes, quotes, full text before the first `#`/`~`/`note.`, expression words split
 * where operator characters begin or end.
 *
 * @module
 */

/** One word of a query as Core's lexer produces it. */
interface Token {
  token: string;
  inQuotes: boolean;
}

const OPERATOR_CHARS = new Set(["=", "*", ">", "<", "!", "-", "+", "%", ","]);
const QUOTES = new Set(['"', "'", "`"]);

/** Core's lexer (`services/search/services/lex.ts`), reduced to the tokens it produces. */
function lex(query: string): { fulltext: Token[]; expression: Token[] } {
  let str = query.toLowerCase();
  const fulltext: Token[] = [];
  const expression: Token[] = [];
  let quote: string | null = null;
  let fulltextEnded = false;
  let word = "";
  // a leading `=word` asks for exact matches; the `=` is not part of the first word
  if (/^=[^= ]/.test(str)) str = str.slice(1);

  const lastIsOperator = () => word.length > 0 && OPERATOR_CHARS.has(word[word.length - 1]);
  const finish = (evenEmpty = false) => {
    if (word === "" && !evenEmpty) return;
    (fulltextEnded ? expression : fulltext).push({ token: word, inQuotes: quote !== null });
    word = "";
  };

  for (let i = 0; i < str.length; i++) {
    const ch = str[i];
    if (ch === "\\") {
      word += i + 1 < str.length ? str[++i] : ch;
      continue;
    }
    if (QUOTES.has(ch)) {
      if (quote === null) {
        if (word === "" || lastIsOperator()) {
          finish();
          quote = ch;
        } else {
          word += ch; // a quote inside a word is literal (d'Artagnan)
        }
      } else if (quote === ch) {
        finish(true);
        quote = null;
      } else {
        word += ch;
      }
      continue;
    }
    if (quote === null) {
      if (!fulltextEnded && word === "note" && ch === "." && i + 1 < str.length) {
        fulltextEnded = true;
      }
      if (ch === "#" || ch === "~") {
        if (fulltextEnded) finish();
        fulltextEnded = true;
        word = ch;
        continue;
      }
      if ((word === "#" || word === "~") && ch === "!") {
        word += ch;
        continue;
      }
      if (ch === " ") {
        finish();
        continue;
      }
      if (fulltextEnded && (ch === "(" || ch === ")" || ch === ".")) {
        finish();
        word = ch;
        finish();
        continue;
      }
      if (
        fulltextEnded && word !== "#!" && word !== "~!" &&
        lastIsOperator() !== OPERATOR_CHARS.has(ch)
      ) {
        finish();
        word = ch;
        continue;
      }
    }
    if (ch === ",") continue;
    word += ch;
  }
  finish();
  return { fulltext, expression };
}

/**
 * What in `query` makes Core fail with a 500 or silently answer something else, or null when
 * nothing does: a regular expression after `%=` that JavaScript cannot compile (Core compiles it
 * with `new RegExp` when it tests the first value), an empty quoted full-text term (Core's
 * content search refuses it), or parentheses Core would misread (see below).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   callerQueryProblem("note.content %= '['"),
 *   'the regular expression after %= is invalid: "[" (Unterminated character class)',
 * );
 * assert.equal(callerQueryProblem("#loreType %= '^(event|timeline)$'"), null);
 * ```
 */
export function callerQueryProblem(query: string): string | null {
  const { fulltext, expression } = lex(query);
  if (fulltext.some((t) => t.token.trim() === "")) {
    return "an empty quoted search term is not allowed";
  }
  const grouping = parenthesisProblem(expression);
  if (grouping) return grouping;
  for (let i = 0; i + 1 < expression.length; i++) {
    const op = expression[i];
    const operand = expression[i + 1];
    if (op.inQuotes || op.token !== "%=") continue;
    // a parenthesis is grouping, never compiled
    if (operand.token === "(" || operand.token === ")") continue;
    try {
      new RegExp(operand.token);
    } catch (e) {
      const reason = e instanceof Error ? e.message.slice(e.message.lastIndexOf(": ") + 2) : "";
      const shown = operand.token.length > 60 ? `${operand.token.slice(0, 60)}…` : operand.token;
      return `the regular expression after %= is invalid: ${JSON.stringify(shown)}${
        reason ? ` (${reason})` : ""
      }`;
    }
  }
  return null;
}

/**
 * Core groups by a token's text alone, quoted or not: a quoted `(` or `)` is grouping, not a
 * value, and a group left open makes Core drop the whole condition and answer with every note.
 * A lone `)` with no open group is an ordinary value, as in Core.
 */
function parenthesisProblem(expression: readonly Token[]): string | null {
  let open = 0;
  for (const t of expression) {
    if (t.token !== "(" && (t.token !== ")" || open === 0)) continue;
    if (t.inQuotes) {
      return `a quoted "${t.token}" is read by Core as a parenthesis, not as a value`;
    }
    open += t.token === "(" ? 1 : -1;
  }
  return open > 0 ? "a parenthesis is not closed: Core would ignore the whole condition" : null;
}
