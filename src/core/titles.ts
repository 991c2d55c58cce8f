/**
 * Note titles as Core stores them and as the GM typed them. Core HTML-sanitizes a title on
 * `create-note` (sanitize-html with its tag allow-list: `&`, `<` and `>` in text are stored as
 * `&amp;`, `&lt;`, `&gt;`; a tag off the list goes, text and all of `<Tide>`; an allowed one
 * such as `<b>` stays) but stores a PATCHed title exactly as sent, and other writers (Core's own
 * editor, imports, earlier versions of this service) leave either form behind.
 *
 * Inside the service a title is always the text as typed. The Core client reads every title
 * through {@linkcode titlesFromCore} (once, where Core's answers enter) and writes titles in the
 * form create-note stores ({@linkcode titleForCore}), on create and on rename alike: Core keeps
 * all of `Salt & Smoke <Tide>`, stored titles are uniform, and a title search can look for the
 * stored form (`search_query.ts`). Renderers escape titles once, like any other text.
 *
 * The Parser reads notes from Core itself and relays their titles as stored (RAG hits, graph
 * nodes, brain-dump duplicates, …): the fields of its answers that are Core titles are declared
 * {@linkcode relayedTitle} in the schemas its answers are read with ({@linkcode readRelayed}),
 * and decoded there, once.
 *
 * @module
 */
import { z } from "zod";
import { htmlEngine, loadHtmlEngine } from "../sanitize/html_engine.ts";
import { decodeHtmlEntities, htmlTextContent } from "../sanitize/plain_text.ts";

const ESCAPED: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/**
 * A typed title in the form Core's create-note sanitizer stores for that text: `&`, `<` and `>`
 * escaped, nothing else (quotes stay as they are, as the sanitizer writes them). Core's sanitizer
 * leaves this form unchanged, so create and PATCH store the same bytes and
 * {@linkcode titleFromCore} gives back exactly what was typed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(titleForCore("Salt & Smoke <Tide>"), "Salt &amp; Smoke &lt;Tide&gt;");
 * assert.equal(titleFromCore(titleForCore("Tom &amp; Jerry")), "Tom &amp; Jerry");
 * ```
 */
export function titleForCore(typed: string): string {
  return /[&<>]/.test(typed) ? typed.replace(/[&<>]/g, (c) => ESCAPED[c]) : typed;
}

/** Whether a stored title holds anything to decode (else it is the typed text already). */
const hasMarkup = (stored: string) => stored.includes("&") || stored.includes("<");

/**
 * The text a browser shows for a title as Core stores it: character references decoded, tags
 * reduced to their text (through the lore sanitizer, so a `<script>`'s text never counts),
 * whitespace as stored. A title without `&` or `<` is returned as it is (no copy). A title with
 * `<` needs the HTML engine loaded (it throws before); {@linkcode titlesFromCore} loads it when a
 * title needs it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { htmlEngine, loadHtmlEngine } from "../sanitize/html_engine.ts";
 *
 * assert.equal(titleFromCore("Salt &amp; Smoke &lt;Tide&gt;"), "Salt & Smoke <Tide>");
 * assert.equal(titleFromCore("Harbor"), "Harbor");
 * await loadHtmlEngine();
 * assert.equal(titleFromCore("<b>Salt</b> &amp; Smoke"), "Salt & Smoke");
 * ```
 */
export function titleFromCore(stored: string): string {
  if (!hasMarkup(stored)) return stored;
  return stored.includes("<") ? htmlTextContent(stored) : decodeHtmlEntities(stored);
}

/**
 * Replaces, in place, the title of each entity Core sent (notes, revisions, attachments) with
 * {@linkcode titleFromCore}'s text, loading the HTML engine first only when a title holds a
 * tag. Whether any title changed (an answer passed on as Core's own text no longer may be).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const notes = [{ title: "Harbor" }, { title: "<i>Salt</i> &amp; Smoke" }];
 * assert.equal(await titlesFromCore(notes), true);
 * assert.deepEqual(notes.map((n) => n.title), ["Harbor", "Salt & Smoke"]);
 * assert.equal(await titlesFromCore(notes), false);
 * ```
 */
export async function titlesFromCore(entities: readonly { title: string }[]): Promise<boolean> {
  let changed = false;
  for (const entity of entities) {
    const stored = entity.title;
    if (!hasMarkup(stored)) continue;
    if (stored.includes("<")) await loadHtmlEngine();
    const text = titleFromCore(stored);
    if (text !== stored) {
      entity.title = text;
      changed = true;
    }
  }
  return changed;
}

/** Whether the HTML engine is loaded (it throws until then). */
function htmlEngineReady(): boolean {
  try {
    htmlEngine();
    return true;
  } catch {
    return false;
  }
}

/** The issue a relayed title with a tag raises while the HTML engine is not loaded yet. */
const ENGINE_PENDING = { htmlEngine: "pending" } as const;

/**
 * The typed text of a relayed Core title inside a zod transform: {@linkcode titleFromCore}'s, or,
 * for a title with a tag while the HTML engine is not loaded, an issue that
 * {@linkcode readRelayed} answers by loading it and reading again. For a Core title embedded in
 * a field's text; a field that is a title is declared {@linkcode relayedTitle}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 *
 * const notice = z.string().transform((text, ctx) =>
 *   text.replace(/(?<=^Duplicate of ")(.*)(?="$)/s, (title) => relayedTitleText(title, ctx))
 * );
 * const read = await readRelayed(notice, 'Duplicate of "Salt &amp; Smoke"');
 * assert.equal(read.success && read.data, 'Duplicate of "Salt & Smoke"');
 * ```
 */
export function relayedTitleText(stored: string, ctx: z.RefinementCtx): string {
  if (stored.includes("<") && !htmlEngineReady()) {
    ctx.addIssue({
      code: "custom",
      message: "a title with a tag needs the HTML engine",
      params: ENGINE_PENDING,
    });
    return z.NEVER;
  }
  return titleFromCore(stored);
}

/**
 * A Core title as another service relays it, in Core's stored form (the Parser reads notes from
 * Core itself): a string whose output is the typed title ({@linkcode titleFromCore}). Declare it
 * on exactly the fields of an upstream answer that are Core titles, never on text a user typed
 * or a model wrote, and read the answer with {@linkcode readRelayed}. Our own answers' schemas
 * describe the typed text as a plain string (decoding twice would change `Tom &amp; Jerry`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 *
 * const hit = z.object({ noteId: z.string(), noteTitle: relayedTitle, content: z.string() });
 * const read = await readRelayed(hit, {
 *   noteId: "n1",
 *   noteTitle: "Tom &amp;amp; Jerry",
 *   content: "a &amp; b",
 * });
 * assert.deepEqual(read.success && read.data, {
 *   noteId: "n1",
 *   noteTitle: "Tom &amp; Jerry",
 *   content: "a &amp; b", // not a title: left as the Parser wrote it
 * });
 * ```
 */
export const relayedTitle: z.ZodType<string, string> = z.string()
  .transform(relayedTitleText).pipe(z.string()).describe("a Core title, as typed");

/** Whether an issue (or one inside a union's) is a relayed title waiting for the HTML engine. */
function enginePending(issue: z.core.$ZodIssue): boolean {
  if (issue.code === "invalid_union") return issue.errors.some((e) => e.some(enginePending));
  return issue.code === "custom" && issue.params?.htmlEngine === ENGINE_PENDING.htmlEngine;
}

/**
 * `schema.safeParse(raw)` for an answer holding {@linkcode relayedTitle} fields: when one holds a
 * tag and the HTML engine is not loaded yet, the engine is loaded and the answer read again
 * (answers without such a title never load it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 *
 * const node = z.object({ title: relayedTitle });
 * const read = await readRelayed(node, { title: "<b>Reef</b> &amp; Quay" });
 * assert.deepEqual(read.success && read.data, { title: "Reef & Quay" });
 * assert.equal((await readRelayed(node, { title: 7 })).success, false);
 * ```
 */
export async function readRelayed<S extends z.ZodType>(
  schema: S,
  raw: unknown,
): Promise<z.ZodSafeParseResult<z.output<S>>> {
  const first = schema.safeParse(raw);
  if (first.success || !first.error.issues.some(enginePending)) return first;
  await loadHtmlEngine();
  return schema.safeParse(raw);
}
