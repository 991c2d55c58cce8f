import assert from "node:assert/strict";
import { lexSearch, type SearchToken } from "./search_lex.ts";

const words = (ts: SearchToken[]) => ts.map((t) => t.token);
const full = (q: string) => words(lexSearch(q).fulltext);
const expr = (q: string) => words(lexSearch(q).expression);
const plain = (token: string): SearchToken => ({ token, inQuotes: false });
const quoted = (token: string): SearchToken => ({ token, inQuotes: true });

// The cases of Core's own lex.spec.ts (apps/server/src/services/search/services/), minus positions.
Deno.test("lexSearch: Core's full-text cases", () => {
  assert.deepEqual(full("hello world"), ["hello", "world"]);
  assert.deepEqual(full("hello, world"), ["hello", "world"]);
  for (
    const q of ["'hello world' my friend", '"hello world" my friend', "`hello world` my friend"]
  ) {
    assert.deepEqual(full(q), ["hello world", "my", "friend"], q);
  }
  assert.deepEqual(full("'i can use \" or ` or #~=*' without problem"), [
    'i can use " or ` or #~=*',
    "without",
    "problem",
  ]);
  assert.deepEqual(full('hello \\"world\\"'), ["hello", '"world"']);
  assert.deepEqual(full("hello \\'world\\'"), ["hello", "'world'"]);
  assert.deepEqual(full("hello \\`world\\`"), ["hello", "`world`"]);
  assert.deepEqual(full('"hello \\"world\\"'), ['hello "world"']);
  assert.deepEqual(full("'hello \\'world\\''"), ["hello 'world'"]);
  assert.deepEqual(full("`hello \\`world\\``"), ["hello `world`"]);
  assert.deepEqual(full("\\#token"), ["#token"]);
  assert.deepEqual(full("hello \\#\\~\\'"), ["hello", "#~'"]);
  assert.deepEqual(full("'unfinished quote"), ["unfinished quote"]);
  assert.deepEqual(full("what's u=p <b(r*t)h>"), ["what's", "u=p", "<b(r*t)h>"]);
  const artagnan = lexSearch("d'Artagnan is dead #hero = d'Artagnan");
  assert.deepEqual(words(artagnan.fulltext), ["d'artagnan", "is", "dead"]);
  assert.deepEqual(words(artagnan.expression), ["#hero", "=", "d'artagnan"]);
});

Deno.test("lexSearch: Core's leading = (exact match) cases", () => {
  for (
    const [q, tokens, op] of [
      ["=example", ["example"], "="],
      ["=hello world", ["hello", "world"], "="],
      ["='hello world'", ["hello world"], "="],
      ["==example", ["==example"], ""],
      ["= example", ["=", "example"], ""],
      ["example", ["example"], ""],
    ] as const
  ) {
    const lex = lexSearch(q);
    assert.deepEqual([words(lex.fulltext), lex.leadingOperator], [tokens, op], q);
  }
});

Deno.test("lexSearch: Core's expression cases", () => {
  assert.deepEqual(expr("#label ~relation"), ["#label", "~relation"]);
  assert.deepEqual(expr("# abc+=-def**-+d"), ["#", "abc", "+=-", "def", "**-+", "d"]);
  assert.deepEqual(lexSearch("#label*=*'text'").expression, [
    plain("#label"),
    plain("*=*"),
    quoted("text"),
  ]);
  assert.deepEqual(lexSearch("#label*=*text").expression, [
    plain("#label"),
    plain("*=*"),
    plain("text"),
  ]);
  assert.deepEqual(lexSearch("#label = ''").expression, [plain("#label"), plain("="), quoted("")]);
  assert.deepEqual(expr("hello fulltext note.labels.capital = Prague"), [
    "note",
    ".",
    "labels",
    ".",
    "capital",
    "=",
    "prague",
  ]);
  const inQuotes = lexSearch(`hello fulltext "note.txt"`);
  assert.deepEqual([words(inQuotes.fulltext), inQuotes.expression], [
    ["hello", "fulltext", "note.txt"],
    [],
  ]);
  assert.deepEqual(expr("# (#label=text OR #second=text) AND ~relation"), [
    "#",
    "(",
    "#label",
    "=",
    "text",
    "or",
    "#second",
    "=",
    "text",
    ")",
    "and",
    "~relation",
  ]);
});

// Where the double's former lexer read differently from Core (checked against Core's lex.ts).
Deno.test("lexSearch: quirks the Core double used to read differently", () => {
  // `#`/`~` then an operator character other than `!` is split: `~=` is never one token
  assert.deepEqual(expr("#a ~= x"), ["#a", "~", "=", "x"]);
  assert.deepEqual(expr("#+="), ["#", "+="]);
  assert.deepEqual(expr("#!x ~!y"), ["#!x", "~!y"]);
  // a quote opens after an operator character in full text too
  assert.deepEqual(lexSearch("a='b c'").fulltext, [plain("a="), quoted("b c")]);
  // a comma starting an operator run is a token, even at a word's start
  assert.deepEqual(expr("#a ,b"), ["#a", ",", "b"]);
  assert.deepEqual(expr("#a=b,c"), ["#a", "=", "b", ",", "c"]);
  assert.deepEqual(expr("#a = 'b,c'"), ["#a", "=", "b" + "c"]);
  // an unclosed quote with nothing in it makes no token (a closed '' does)
  assert.deepEqual(lexSearch("#a = '").expression, [plain("#a"), plain("=")]);
  assert.deepEqual(lexSearch("#a = 'b").expression, [plain("#a"), plain("="), quoted("b")]);
  // a word glued to the first `#` is overwritten without a word; the lexer reports it
  const glued = lexSearch("(#a or #b) #c");
  assert.deepEqual([glued.fulltext, glued.discarded], [[], "("]);
  assert.deepEqual(expr("(#a or #b) #c"), ["#a", "or", "#b", ")", "#c"]);
  assert.equal(lexSearch("a #b").discarded, null);
  // only a space separates words
  assert.deepEqual(expr("#a\tor #b\n"), ["#a\tor", "#b\n"]);
});

/** mulberry32: a small seeded generator, so every run reads the same queries. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  ...["dragon", "D'Artagnan", "Ärger", "日本", "🐉", "or", "and", "1.5", "half-elf", "a,b"],
  ...["note", "note.", "note.title", ".", "#", "#lore", "#!x", "~", "~rel", "~!r"],
  ...["=", "!=", "*=*", "%=", ">=", "<", "=*", "*=", "-", "+", ",", "(", ")"],
  ...['"', "'", "`", "\\", '\\"', "\\'", " ", " ", "\t", "\n"],
];

/** `count` queries of up to 11 pieces each, the same for the same seed. */
function generatedQueries(seed: number, count: number): string[] {
  const random = seeded(seed);
  const pick = () => PIECES[Math.floor(random() * PIECES.length)];
  return Array.from({ length: count }, () => {
    let q = "";
    for (let k = Math.floor(random() * 12); k > 0; k--) q += pick();
    return q;
  });
}

/** A recorded token: a string unquoted, `[string]` quoted. */
type Recorded = string | [string];
const CORE_CASES: [string, Recorded[], Recorded[], string][] = JSON.parse(
  Deno.readTextFileSync(new URL("./search_lex_core_cases.json", import.meta.url)),
);
const record = (ts: SearchToken[]): Recorded[] => ts.map((t) => t.inQuotes ? [t.token] : t.token);

/**
 * `search_lex_core_cases.json` holds Core 0.101.3's own `lex()` output (fulltextTokens,
 * expressionTokens, leadingOperator) for these generated queries, recorded by running Core's
 * lex.ts on them; to re-record after a Core upgrade, run the same generator against it.
 */
Deno.test("lexSearch: agrees with Core's lexer on 1000 generated queries (seed 20240611)", () => {
  const queries = generatedQueries(20240611, 1000);
  assert.deepEqual(CORE_CASES.map(([q]) => q), queries, "the recording is of these queries");
  for (const [q, fulltext, expression, leadingOperator] of CORE_CASES) {
    const lex = lexSearch(q);
    assert.deepEqual(
      [record(lex.fulltext), record(lex.expression), lex.leadingOperator],
      [fulltext, expression, leadingOperator],
      JSON.stringify(q),
    );
  }
});
