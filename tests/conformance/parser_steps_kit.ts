/**
 * What the Parser suite's steps share: server-sent events read back from a whole body, the
 * suite's own lore notes (made through the service), and the bookkeeping of notes the Parser
 * created for the run.
 *
 * @module
 */
import { check, createLore, expectStatus, type NoteRef, short } from "./kit.ts";
import type { ParserSuiteState } from "./parser_suite.ts";

/** One server-sent event: its name and its `data` parsed as JSON (or the raw text). */
export interface SseEvent {
  event: string;
  data: unknown;
}

/**
 * The events of a whole `text/event-stream` body; comments (`: keepalive`) are left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(sseEvents("event: done\ndata: {}\n\n"), [{ event: "done", data: {} }]);
 * ```
 */
export function sseEvents(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (!data.length) continue;
    const raw = data.join("\n");
    let parsed: unknown = raw;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // not JSON: kept as text
    }
    out.push({ event, data: parsed });
  }
  return out;
}

/**
 * Posts to a stream route and returns its events after checking the answer is a stream that
 * ended with `done` (an `error` event fails the step, naming it).
 */
export async function streamEvents(
  s: ParserSuiteState,
  path: string,
  body: unknown,
): Promise<SseEvent[]> {
  const a = await s.api.call("POST", path, { json: body });
  expectStatus(a, 200, `POST ${path}`);
  check(
    (a.headers.get("content-type") ?? "").startsWith("text/event-stream"),
    `POST ${path}: not an event stream (${a.headers.get("content-type")})`,
  );
  const events = sseEvents(a.text);
  const last = events.at(-1);
  check(last, `POST ${path}: the stream sent no event`);
  if (last.event === "error") {
    throw new Error(
      `POST ${path}: the stream ended with error ${short(JSON.stringify(last.data))}`,
    );
  }
  check(last.event === "done", `POST ${path}: the last event is ${last.event}, not done`);
  return events;
}

/**
 * The suite's character and location notes ("A", "B"), made through the service on first use.
 */
export async function loreNotes(s: ParserSuiteState): Promise<{ a: NoteRef; b: NoteRef }> {
  if (!s.notes.has("A")) {
    await createLore(s, "A", {
      title: `${s.name} Aldmere ${s.tag}`,
      loreType: "character",
      content: `<p>${s.name} Aldmere keeps the lighthouse of the ${s.name} Brindle coast.</p>`,
    });
  }
  if (!s.notes.has("B")) {
    await createLore(s, "B", {
      title: `${s.name} Brindle ${s.tag}`,
      loreType: "location",
      content: `<p>A storm-worn harbour town watched by ${s.name} Aldmere.</p>`,
    });
  }
  return { a: s.notes.get("A")!, b: s.notes.get("B")! };
}

/**
 * Records notes the Parser created for the run (the runner moves them into the scratch note).
 */
export function created(s: ParserSuiteState, ids: readonly string[]): void {
  for (const id of ids) s.written.add(id);
}

/**
 * An id of the same shape as `known` that names nothing (UUIDs stay UUIDs), for not-found checks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.match(unknownIdLike("cmabc123"), /^zz[0-9a-z]{6}$/); // random, shaped like the known id
 * assert.notEqual(unknownIdLike("cmabc123"), unknownIdLike("cmabc123"));
 * ```
 */
export function unknownIdLike(known: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(known)) return crypto.randomUUID();
  const body = [...crypto.getRandomValues(new Uint8Array(known.length))]
    .map((b) => (b % 36).toString(36)).join("");
  return `zz${body}`.slice(0, Math.max(known.length, 8));
}
