/**
 * Checking a Core search query the caller wrote (`GET /api/lore?q=`, `GET /api/search?q=`) for
 * the mistakes Core does not report as such: it fails with a 500 instead. The query is read
 * with Core's lexer (`search_lex.ts`, shared with the Core double), so a token here is one Core
 * sees.
 *
 * @module
 */

import { lexSearch, type SearchToken } from "./search_lex.ts";

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
  const { fulltext, expression } = lexSearch(query);
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
function parenthesisProblem(expression: readonly SearchToken[]): string | null {
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
