/**
 * Imports (Parser): a system pack of statblocks, and a fantasy-map-generator (Azgaar) export
 * whose states, burgs, religions, cultures and map notes become lore notes. The Parser writes
 * the notes into the caller's Core one ETAPI call at a time, so the input is checked here first:
 * a wrong shape, a missing parent or markup where the Parser writes plain text never reaches it.
 *
 * What the Parser is sent is bounded and clean: statblock and map-note HTML is sanitized with the
 * lore allow-list (it becomes stored note content), map text that the Parser pastes into note
 * HTML unescaped may not contain `<` or `>`, and of a map export only the parts the Parser reads
 * are forwarded (a few KB of a multi-MB file). Per-note failures come back without the Parser's
 * error text (it carries Core's raw answers).
 *
 * @module
 */
import { z } from "zod";
import { json } from "../http/response.ts";
import { idSchema } from "../lore/ids.ts";
import { rethrowMissingReference } from "../lore/references.ts";
import { type Ctx, defineRoute, type Route } from "../api/router.ts";
import {
  editorRewriter,
  type HtmlRewriter,
  noteIdFromImageSrc,
  sanitizeLoreHtml,
} from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import { parserJson } from "./parser_proxy.ts";

/**
 * Most statblocks per Parser call. Each is up to 23 sequential Core writes inside the Parser, and
 * the whole call must finish within the Parser's 30 s idle timeout (its answer comes only at the
 * end): a bigger pack is sent in parts of this size, one after another.
 */
export const MAX_PACK_ENTRIES = 50;

/** Most statblocks per system-pack request (a pack file as the front end sends it whole). */
export const MAX_PACK_REQUEST = 1_000;

/** Largest map export accepted (JSON body), instead of `MAX_JSON_BYTES`. */
export const MAX_MAP_BYTES = 16 * 1024 * 1024;

/** Most entries per Azgaar array (states, burgs, religions, cultures, notes). */
export const MAX_MAP_ENTITIES = 20_000;

/**
 * Image and link policy for HTML that is stored in Core (not rendered by us): images only as
 * Core's own `api/images/<id>/…` references, links as the lore sanitizer allows them.
 */
const storedHtml: HtmlRewriter = Object.freeze({
  image(src: string): string | null {
    const id = noteIdFromImageSrc(src);
    return id === null ? null : `api/images/${id}/image`;
  },
  link: (href: string) => editorRewriter.link(href),
});

/**
 * HTML that becomes note content: at most `max` characters, sanitized by the handler with
 * {@linkcode storedContent} before it is sent (the body is validated before the HTML engine is
 * loaded, so a schema cannot sanitize).
 */
const htmlContent = (max: number) => z.string().max(max);

/** Stored note content from client HTML; loads the HTML engine first. */
async function storedContent(html: string): Promise<string> {
  await loadHtmlEngine();
  return sanitizeLoreHtml(html, storedHtml);
}

/** The note an import writes under (default the lore root); 400 when it is not in Core. */
async function importParent(ctx: Ctx<unknown, unknown, { parentNoteId?: string }>) {
  const parentNoteId = ctx.body.parentNoteId ?? await ctx.loreRootId();
  await (await ctx.core()).getNote(parentNoteId).catch(rethrowMissingReference("parentNoteId"));
  return parentNoteId;
}

// ---------------------------------------------------------------------------------------------
// What the Parser reports per note

/** What a failed note says instead of the Parser's text (which quotes Core's raw answer). */
export const NOTE_WRITE_FAILED = "The Parser could not write this note to Core";

const outcome = z.object({
  created: z.array(z.object({ noteId: idSchema, name: z.string().max(500) })),
  skipped: z.array(z.object({
    name: z.string().max(500),
    reason: z.string().regex(/^[a-z][a-z_-]{0,39}$/),
  })),
  errors: z.array(z.object({ name: z.string().max(500), error: z.string() })),
});

/** The outcome with each error's text replaced by {@linkcode NOTE_WRITE_FAILED}. */
function withoutParserText(o: z.output<typeof outcome>) {
  return { ...o, errors: o.errors.map(({ name }) => ({ name, error: NOTE_WRITE_FAILED })) };
}

const count = z.number().int().nonnegative();

/** Where an import writes, and what becomes of it after the AI deadline. */
const IMPORT_NOTES = "Notes go under `parentNoteId`, or the lore root, which must exist in Core " +
  "(400 otherwise, nothing imported). A note the Parser could not write says only that " +
  `(\`${NOTE_WRITE_FAILED}\`): the Parser's text quotes Core's raw answers. After the AI ` +
  "deadline the import runs on; repeating the same request gets its report, not a second " +
  "import (which would only report the notes as duplicates).";

// ---------------------------------------------------------------------------------------------
// System pack (statblocks)

const stat = z.union([z.number().finite(), z.string().trim().max(50)]);
const text = (max: number) => z.string().trim().max(max);

const statblockEntry = z.object({
  name: z.string().trim().min(1).max(200),
  cr: stat.optional(),
  ac: stat.optional(),
  hp: stat.optional(),
  str: stat.optional(),
  dex: stat.optional(),
  con: stat.optional(),
  int: stat.optional(),
  wis: stat.optional(),
  cha: stat.optional(),
  type: text(200).optional(),
  size: text(200).optional(),
  alignment: text(200).optional(),
  speed: text(200).optional(),
  immunities: text(2000).optional(),
  resistances: text(2000).optional(),
  vulnerabilities: text(2000).optional(),
  abilities: text(20_000).optional(),
  actions: text(20_000).optional(),
  legendaryActions: text(20_000).optional(),
  content: htmlContent(200_000).optional(),
});

const systemPackBody = z.strictObject({
  notes: z.array(statblockEntry).min(1).max(MAX_PACK_REQUEST),
  parentNoteId: idSchema.optional(),
  skipDuplicates: z.boolean().optional(),
}).superRefine((b, ctx) => {
  // the Parser checks duplicates against Core only, so it would create both of two equal names
  if (b.skipDuplicates === false) return;
  const first = new Map<string, number>();
  b.notes.forEach((n, i) => {
    const key = n.name.toLowerCase();
    const at = first.get(key);
    if (at === undefined) first.set(key, i);
    else {
      ctx.addIssue({
        code: "custom",
        path: ["notes", i, "name"],
        message: `repeats notes.${at}.name (allowed only with skipDuplicates: false)`,
      });
    }
  });
});

const systemPackAnswer = z.object({
  created: count,
  skipped: count,
  errors: count,
  detail: outcome,
});

/** The reports of a pack's parts as one: counts added up, notes in order. */
function packReport(
  parts: z.output<typeof systemPackAnswer>[],
): z.output<typeof systemPackAnswer> {
  return {
    created: parts.reduce((n, p) => n + p.created, 0),
    skipped: parts.reduce((n, p) => n + p.skipped, 0),
    errors: parts.reduce((n, p) => n + p.errors, 0),
    detail: {
      created: parts.flatMap((p) => p.detail.created),
      skipped: parts.flatMap((p) => p.detail.skipped),
      errors: parts.flatMap((p) => p.detail.errors),
    },
  };
}

/** `POST /api/import/system-pack` — statblocks become `#statblock` notes. */
export const importSystemPack = defineRoute({
  method: "POST",
  path: "/api/import/system-pack",
  summary:
    `Import a system pack: \`{ notes: StatblockEntry[] (1-${MAX_PACK_REQUEST}), parentNoteId?, skipDuplicates? }\` become #statblock notes`,
  backend: "Parser", // the route list's column; Core is only asked whether the parent exists
  access: "private",
  tag: "import",
  body: { kind: "json", schema: systemPackBody },
  description: `1-${MAX_PACK_REQUEST} statblocks a request; the Parser is sent them in parts ` +
    `of ${MAX_PACK_ENTRIES}, one after another (each statblock is up to 23 Core writes in the ` +
    "Parser, and one call must finish within its own idle timeout), and the answer adds the " +
    "parts up. When a part fails the request answers that error; the notes of the parts " +
    "before stay, and a repeat skips them as duplicates (unless `skipDuplicates` is false). " +
    "`name` 1-200 characters, unique within the pack unless `skipDuplicates` is false; " +
    "fields the importer does not read are dropped; " +
    `\`content\` HTML is sanitized. ${IMPORT_NOTES}`,
  responses: {
    200: {
      description: "`{ created, skipped, errors, detail: { created: [{ noteId, name }], " +
        "skipped: [{ name, reason }], errors: [{ name, error }] } }`: counts, then each note",
      schema: systemPackAnswer,
    },
    400: "Invalid entries, repeated names (unless skipDuplicates is false), or a parent that " +
      "does not exist (nothing imported)",
  },
  // many Core writes in a row: a repeat would only report the notes as duplicates, not made
  ai: {},
  handler: async (ctx) => {
    const parser = await ctx.parser({ ai: true });
    const parentNoteId = await importParent(ctx);
    const notes = await Promise.all(
      ctx.body.notes.map(async (n) =>
        n.content === undefined ? n : { ...n, content: await storedContent(n.content) }
      ),
    );
    const parts: z.output<typeof systemPackAnswer>[] = [];
    for (let at = 0; at < notes.length; at += MAX_PACK_ENTRIES) {
      parts.push(
        await parserJson(parser, {
          method: "POST",
          path: "/import/system-pack",
          body: { ...ctx.body, notes: notes.slice(at, at + MAX_PACK_ENTRIES), parentNoteId },
        }, systemPackAnswer),
      );
      ctx.progress(); // a part done: the import is still moving
    }
    const r = packReport(parts);
    return json({ ...r, detail: withoutParserText(r.detail) });
  },
});

// ---------------------------------------------------------------------------------------------
// Map generator (Azgaar Fantasy Map Generator JSON export)

/** Text the Parser pastes into note HTML without escaping: no markup characters allowed. */
const plain = (max = 200) =>
  z.string().max(max).refine((s) => !/[<>]/.test(s), "must not contain < or >").nullish();
const index = z.number().int().nonnegative().nullish();
const quantity = z.number().finite().nonnegative().nullish();
const entity = { i: index, name: plain(), removed: z.boolean().nullish() };
const list = <S extends z.ZodType>(item: S) => z.array(item).max(MAX_MAP_ENTITIES).optional();

/** An Azgaar export, reduced to what the Parser reads (zod drops every other field). */
const azgaarExport = z.object({
  info: z.object({ mapName: plain() }).nullish(),
  settings: z.object({ mapName: plain() }).nullish(),
  pack: z.object({
    states: list(z.object({
      ...entity,
      fullName: plain(),
      form: plain(),
      formName: plain(),
      capital: index,
    })),
    burgs: list(z.object({
      ...entity,
      type: plain(),
      state: index,
      culture: index,
      population: quantity,
      capital: quantity,
      port: quantity,
      citadel: quantity,
      walls: quantity,
    })),
    religions: list(z.object({
      ...entity,
      faith: plain(),
      form: plain(),
      type: plain(),
      deity: plain(),
    })),
    cultures: list(z.object({ ...entity, type: plain() })),
  }, { error: "must be the export's pack object" }).refine(
    (p) => p.states !== undefined || p.burgs !== undefined || p.religions !== undefined,
    "needs a states, burgs or religions array: this is not a map generator export",
  ),
  notes: list(z.object({
    id: z.string().max(200).nullish(),
    name: plain(),
    legend: htmlContent(200_000).nullish(),
  })),
});

const mapgenQuery = z.object({ action: z.enum(["import", "preview"]).default("import") });

const mapgenBody = z.strictObject({
  mapData: azgaarExport,
  parentNoteId: idSchema.optional(),
  options: z.strictObject({
    importStates: z.boolean().optional(),
    importBurgs: z.boolean().optional(),
    importReligions: z.boolean().optional(),
    importCultures: z.boolean().optional(),
    importNotes: z.boolean().optional(),
    skipDuplicates: z.boolean().optional(),
  }).optional(),
});

const previewAnswer = z.object({
  mapName: z.string().max(200),
  stateCnt: count,
  burgCnt: count,
  religionCnt: count,
  cultureCnt: count,
  noteCnt: count,
});

const mapAnswer = z.object({
  mapName: z.string().max(200),
  states: outcome,
  burgs: outcome,
  religions: outcome,
  cultures: outcome,
  notes: outcome,
  totals: z.object({ created: count, skipped: count, errors: count }),
});

/** `POST /api/import/mapgen[?action=preview]` — import (or count) an Azgaar map export. */
export const importMapgen = defineRoute({
  method: "POST",
  path: "/api/import/mapgen",
  aliases: ["/api/import/azgaar"], // the front end's name, after the generator
  summary:
    "Import a fantasy-map-generator (Azgaar) JSON export `{ mapData, parentNoteId?, options? }` (up to 16 MiB); `?action=preview` only counts",
  backend: "Parser", // the route list's column; Core is only asked whether the parent exists
  access: "private",
  tag: "import",
  query: mapgenQuery,
  body: { kind: "json", schema: mapgenBody, maxBytes: MAX_MAP_BYTES },
  description: "The generator's JSON export, up to 16 MiB: `mapData.pack` must hold a " +
    `\`states\`, \`burgs\` or \`religions\` array (up to ${MAX_MAP_ENTITIES} entries each). ` +
    "Only the parts the Parser reads are forwarded; names and other text the Parser pastes into " +
    "note HTML unescaped may not contain `<` or `>`, note legends are sanitized. `options` pick " +
    "the categories and whether duplicates are skipped. `?action=preview` takes the same " +
    `body and only counts (no parent needed). ${IMPORT_NOTES}`,
  responses: {
    200: {
      description: "Import: `{ mapName, states, burgs, religions, cultures, notes, totals: " +
        "{ created, skipped, errors } }`, each category `{ created: [{ noteId, name }], " +
        "skipped: [{ name, reason }], errors: [{ name, error }] }`; preview: `{ mapName, " +
        "stateCnt, burgCnt, religionCnt, cultureCnt, noteCnt }`",
      schema: z.union([mapAnswer, previewAnswer]),
    },
    400: "Not a map export, markup in a name, an unknown `action` or option, or a parent that " +
      "does not exist (nothing imported)",
    413: "Body over 16 MiB (use the generator's minimal JSON export)",
  },
  ai: {},
  handler: async (ctx) => {
    const parser = await ctx.parser({ ai: true });
    const { options } = ctx.body;
    const notes = ctx.body.mapData.notes && await Promise.all(
      ctx.body.mapData.notes.map(async (n) =>
        typeof n.legend === "string" ? { ...n, legend: await storedContent(n.legend) } : n
      ),
    );
    const mapData = { ...ctx.body.mapData, notes };
    if (ctx.query.action === "preview") {
      const call = { method: "POST" as const, path: "/import/azgaar/preview", body: { mapData } };
      return json(await parserJson(parser, call, previewAnswer));
    }
    const parentNoteId = await importParent(ctx);
    const r = await parserJson(parser, {
      method: "POST",
      path: "/import/azgaar",
      body: { mapData, parentNoteId, ...(options ? { options } : {}) },
    }, mapAnswer);
    return json({
      ...r,
      states: withoutParserText(r.states),
      burgs: withoutParserText(r.burgs),
      religions: withoutParserText(r.religions),
      cultures: withoutParserText(r.cultures),
      notes: withoutParserText(r.notes),
    });
  },
});

/** The import routes. */
export const importRoutes: Route[] = [importSystemPack, importMapgen];
