/**
 * Conformance steps: Core behaviours the service works around, so that an upgrade changing them
 * shows up. Linking a `~template` turns an empty code, mermaid or canvas note into the template's
 * type; the service puts the type back. Built-in notes' attributes have ids containing `:`; the
 * attribute routes accept them. Some queries make Core fail with a 500 (an invalid `%=` regular
 * expression, an empty quoted term); the service answers those with the caller's 400.
 *
 * @module
 */
import { z } from "zod";
import {
  attributeSchema,
  check,
  createLore,
  type ErrorBody,
  factOf,
  loreListSchema,
  noSecrets,
  noteOf,
  ownAttrs,
  readLore,
  same,
  type Step,
  type SuiteState,
} from "./kit.ts";

/** Queries Core fails on with a 500: an invalid regular expression, an empty quoted term. */
const CORE_FAILING_QUERIES = ["note.content %= '['", '""'];

/**
 * Signs that Core's failure text reached the caller: its own messages for these queries (the
 * SyntaxError of `new RegExp`, its token check), a stack frame or a source path.
 */
const CORE_INTERNALS = [
  /Invalid regular expression/i,
  /Invalid tokens/i,
  /\bat \S+ \(|\bat (?:file|node):/,
  /[\w.-]+\/[\w.-]+\.(?:[cm]?js|ts)\b/,
];

/** The lore template a note was created with: every inherited attribute keeps its owner's id. */
const CHARACTER_TEMPLATE = "_template_character";

const searchIdsSchema = z.looseObject({ results: z.array(z.looseObject({ noteId: z.string() })) });

/** Sorted ids, so sets of results compare whatever order Core gives them in. */
function sortedIds(notes: readonly { noteId: string }[]): string[] {
  return notes.map((n) => n.noteId).sort();
}

/**
 * A valid `%=` query matching exactly notes A and B of the suite (by title), and their ids: the
 * refusals must not catch regular expressions Core can run.
 */
function validRegexQuery(s: SuiteState): { q: string; ids: string[] } {
  return {
    q: `note.title %= '^(aldmere|brindle) .*${s.tag}$'`,
    ids: sortedIds([noteOf(s, "A"), noteOf(s, "B")]),
  };
}

/** Checks a refused query's answer: 400 naming `q`, and nothing of Core's failure in it. */
async function expectRefusedQuery(s: SuiteState, path: string, q: string): Promise<void> {
  const body: ErrorBody = await s.api.error("GET", path, 400, "INVALID_REQUEST");
  check(JSON.stringify(body.details).includes("query.q"), `the 400 for ${q} does not name query.q`);
  const text = JSON.stringify(body);
  for (const sign of CORE_INTERNALS) {
    check(!sign.test(text), `the 400 for ${q} shows Core's internals (${sign.source})`);
  }
  noSecrets(s, text, `the 400 for ${q}`);
}

/** Creates a lore note of `type` with a lore template and checks it keeps its type and mime. */
async function expectTypeKept(
  s: SuiteState,
  role: string,
  body: { title: string; type: string; mime?: string; loreType: string },
  mime: string,
): Promise<void> {
  const note = await createLore(s, role, body);
  same([note.type, note.mime], [body.type, mime], `type and mime of the new ${body.type} note`);
  check(
    ownAttrs(note).includes(`relation:template=_template_${body.loreType}`),
    `the new ${body.type} note lacks its template`,
  );
  const back = await readLore(s, note.noteId);
  same(
    [back.type, back.mime],
    [body.type, mime],
    `type and mime of the ${body.type} note read back`,
  );
}

/** The steps of this module, in run order. */
export const quirkSteps: Step[] = [
  {
    method: "POST",
    path: "/api/lore",
    check: "empty code and mermaid notes keep their type and mime with a lore template",
    run: async (s) => {
      await expectTypeKept(s, "spell", {
        title: `Spell ${s.tag}`,
        type: "code",
        mime: "application/javascript",
        loreType: "spell",
      }, "application/javascript");
      await expectTypeKept(s, "chart", {
        title: `Tide Chart ${s.tag}`,
        type: "mermaid",
        loreType: "location",
      }, "text/vnd.mermaid");
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/attributes",
    check: "~template on an empty code note: the template applies, the type stays code",
    run: async (s) => {
      const note = await createLore(s, "script", { title: `Script ${s.tag}`, type: "code" });
      same([note.type, note.mime], ["code", "text/plain"], "type and mime of the new code note");
      const rel = await s.api.json(
        "POST",
        `/api/lore/${note.noteId}/attributes`,
        201,
        attributeSchema,
        { json: { type: "relation", name: "~template", value: "_template_item" } },
      );
      same([rel.name, rel.value], ["template", "_template_item"], "created relation");
      const back = await readLore(s, note.noteId);
      same([back.type, back.mime], ["code", "text/plain"], "type and mime after ~template");
      check(
        back.attributes.some((a) => a.noteId === "_template_item"),
        "the note inherits nothing from _template_item",
      );
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id",
    check: "a templated note shows the template's attributes, built-in ids with ':' included",
    run: async (s) => {
      const note = await readLore(s, noteOf(s, "A").noteId);
      const inherited = note.attributes.filter((a) => a.noteId === CHARACTER_TEMPLATE);
      check(inherited.length, `no attribute inherited from ${CHARACTER_TEMPLATE}`);
      const builtIn = inherited.find((a) => a.attributeId.includes(":"));
      check(
        builtIn,
        `no inherited attribute id with ":" (ids: ${inherited.map((a) => a.attributeId)})`,
      );
      s.facts.set("builtInAttr", builtIn.attributeId);
    },
  },
  {
    method: "DELETE",
    path: "/api/lore/:id/attributes",
    check: "a template's attribute (built-in id with ':') is 404, not 400, and stays",
    run: async (s) => {
      const a = noteOf(s, "A");
      const attrId = factOf(s, "builtInAttr");
      const attrs = async () => (await readLore(s, a.noteId)).attributes;
      const before = (await attrs()).find((x) => x.attributeId === attrId);
      await s.api.error(
        "DELETE",
        `/api/lore/${a.noteId}/attributes?attrId=${encodeURIComponent(attrId)}`,
        404,
        "NOT_FOUND",
      );
      same((await attrs()).find((x) => x.attributeId === attrId), before, "the template attribute");
    },
  },
  {
    method: "GET",
    path: "/api/lore",
    check: "queries Core fails on (bad %= regex, empty quoted term) are 400; valid %= works",
    run: async (s) => {
      for (const q of CORE_FAILING_QUERIES) {
        await expectRefusedQuery(s, `/api/lore?q=${encodeURIComponent(q)}`, q);
      }
      const valid = validRegexQuery(s);
      const body = await s.api.json(
        "GET",
        `/api/lore?q=${encodeURIComponent(valid.q)}&ancestorNoteId=${s.scratch.noteId}`,
        200,
        loreListSchema,
      );
      same(sortedIds(body), valid.ids, "notes found by a valid %= query");
    },
  },
  {
    method: "GET",
    path: "/api/search",
    check: "queries Core fails on (bad %= regex, empty quoted term) are 400; valid %= works",
    run: async (s) => {
      for (const q of CORE_FAILING_QUERIES) {
        await expectRefusedQuery(s, `/api/search?mode=etapi&q=${encodeURIComponent(q)}`, q);
      }
      const valid = validRegexQuery(s);
      const body = await s.api.json(
        "GET",
        `/api/search?mode=etapi&q=${encodeURIComponent(valid.q)}`,
        200,
        searchIdsSchema,
      );
      same(sortedIds(body.results), valid.ids, "notes found by a valid %= query");
    },
  },
];
