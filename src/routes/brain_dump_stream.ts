/**
 * The Parser's brain-dump stream as this service reads it: its events (as the stream route
 * documents them), the auto answer a non-stream run makes of the stream's outcome, the `done`
 * event with the Core titles it relays decoded to the typed text, and the notes a `done` says
 * were written. The routes that use these are in brain_dump_runs.ts.
 *
 * @module
 */
import { z } from "zod";
import { readRelayed, relayedTitle, relayedTitleText } from "../core/titles.ts";
import { mapParserStreamError } from "../upstream/parser.ts";
import { duplicateNotice } from "./brain_dump_schemas.ts";
import { parserAnswer, streamErrorEventSchema, type StreamOutcome } from "./parser_proxy.ts";

/** The stream's `done`: `raw` is JSON (the write result, or a cache hit's stored entry). */
const streamDone = z.object({
  raw: z.string().transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "not JSON" });
      return z.NEVER;
    }
  }),
});

/** A stream cache hit's `raw`: the history entry stored by the earlier run. */
const storedEntry = z.object({ entities: z.array(z.unknown()), summary: z.string() });

/**
 * The auto answer from the stream's outcome, in the non-stream route's shape: the write result,
 * or for a cache hit (`raw` is the stored `{ entities, summary, revisions }`) the `[cached]`
 * answer that route gives (`{ summary: "[cached] <summary>", created: [], updated: [],
 * skipped: [] }`); an `error` event is the error that route would give.
 */
export async function autoAnswer(outcome: StreamOutcome): Promise<unknown> {
  if (outcome.error !== undefined) throw mapParserStreamError(outcome.error);
  const { raw } = await parserAnswer(streamDone, outcome.done);
  const stored = storedEntry.safeParse(raw);
  return stored.success
    ? { summary: `[cached] ${stored.data.summary}`, created: [], updated: [], skipped: [] }
    : raw;
}

/** Where the write result in a stream's `done.raw` relays Core titles, read as typed. */
const relayedInDone = z.object({
  skipped: z.array(z.object({
    // other reasons stay as the Parser wrote them: the stream passes its text on
    reason: z.string().transform((reason, ctx) =>
      duplicateNotice(reason, (stored) => relayedTitleText(stored, ctx)) ?? reason
    ),
  })).optional(),
  duplicates: z.array(z.object({ matches: z.array(z.object({ title: relayedTitle })) }))
    .optional(),
});

/**
 * The stream's `done` with the Core titles of its write result as typed (duplicate matches, the
 * duplicate notice of a skip), written back in place so the rest of `raw` keeps its bytes;
 * undefined when nothing changes (a cache hit's stored entry relays none), and for data it
 * cannot read, which then passes on as the Parser sent it.
 */
export async function doneAsTyped(data: unknown): Promise<unknown> {
  const done = z.looseObject({ raw: z.string() }).safeParse(data);
  if (!done.success) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(done.data.raw);
  } catch {
    return undefined;
  }
  const read = await readRelayed(relayedInDone, raw);
  if (!read.success) return undefined;
  const result = raw as z.input<typeof relayedInDone>;
  let changed = false;
  const put = <K extends string>(into: Record<K, string>, key: K, typed: string) => {
    if (into[key] !== typed) [into[key], changed] = [typed, true];
  };
  read.data.skipped?.forEach((s, i) => put(result.skipped![i], "reason", s.reason));
  read.data.duplicates?.forEach((d, i) =>
    d.matches.forEach((m, j) => put(result.duplicates![i].matches[j], "title", m.title))
  );
  return changed ? { ...(data as Record<string, unknown>), raw: JSON.stringify(raw) } : undefined;
}

/** The stream's events as the Parser sends them: each `data` names its event in `type`. */
export const streamEvents = {
  status: z.object({ type: z.literal("status"), stage: z.string(), message: z.string() }),
  reasoning: z.object({ type: z.literal("reasoning"), content: z.string() }),
  token: z.object({ type: z.literal("token"), content: z.string() }),
  done: z.object({
    type: z.literal("done"),
    raw: z.string().describe(
      "JSON: the write result (`{ summary, created, updated, skipped, … }`), or on a cache hit " +
        "the stored `{ entities, summary, revisions }`",
    ),
    tokensUsed: z.number(),
    model: z.string(),
    latencyMs: z.number(),
  }),
  error: streamErrorEventSchema,
};

/** A write result's notes, in a stream's `done` (a cache hit's stored entry has none). */
export const writtenInDone = z.object({
  raw: z.string().transform((text) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  }).pipe(z.object({
    created: z.array(z.object({ noteId: z.string() })),
    updated: z.array(z.object({ noteId: z.string() })),
  })),
});
