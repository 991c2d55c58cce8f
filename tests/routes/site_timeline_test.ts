/**
 * The public timeline over HTTP against the Core double: entries grouped by era (the world's
 * timeline notes) or by year, each with its date as the world writes it (`#shareDateLabel`), a
 * one-line summary and the places it happened (relations to visible locations), the world's own
 * timelines with their calendars, breadcrumbs — and no hidden event, era or place.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { seedShowcase } from "../../sims/showcase.ts";
import { createLoreNote, HARBOR_ALIAS, W } from "../../sims/world.ts";

/** The timeline page as a browser reads it: whitespace between and inside tags collapsed. */
async function timeline(h: Harness): Promise<string> {
  const res = await h.request("/public/timeline");
  assert.equal(res.status, 200);
  const text = await res.text();
  assertNoSecrets(h, text);
  return text.replace(/\s+/g, " ").replace(/>\s+</g, "><").replace(/\s+>/g, ">");
}

/** The page's group headings, as their markup. */
const headings = (body: string) =>
  [...body.matchAll(/<h2 id="timeline-\d+">(.*?)<\/h2>/g)].map((m) => m[1]);

/** The markup of the entry linking `noteId`, from its date to its end. */
function entry(body: string, noteId: string): string {
  const at = body.indexOf(`<a href="/public/lore/${noteId}">`);
  assert.ok(at > 0, `no entry for ${noteId}`);
  const start = body.lastIndexOf("<li><time>", at);
  return body.slice(start, body.indexOf("</li>", at) + "</li>".length);
}

function label(h: Harness, noteId: string, name: string, value = "") {
  h.core.store.createAttribute({ noteId, type: "label", name, value });
}

function relation(h: Harness, noteId: string, name: string, value: string) {
  h.core.store.createAttribute({ noteId, type: "relation", name, value });
}

/** A dated event under `parent`. */
function event(h: Harness, parent: string, title: string, date: string, content?: string) {
  const id = createLoreNote(h.core.store, parent, title, "event", content);
  label(h, id, "inWorldDate", date);
  return id;
}

Deno.test("site: the timeline in eras, dates as the world writes them, summaries, places, breadcrumbs", () =>
  withHarness(async (h) => {
    const store = h.core.store;
    const chronicle = createLoreNote(store, W.guide, "Chronicle of the Isles", "timeline");
    label(h, chronicle, "calendarSystem", "Isle Reckoning");
    const bells = createLoreNote(
      store,
      chronicle,
      "The Age of Bells",
      "timeline",
      "<p>When every harbour rang its own bell.</p>",
    );
    const lanterns = createLoreNote(store, chronicle, "The Lantern Years", "timeline");
    // a hidden era: neither it nor its events are ever shown
    const drowned = createLoreNote(store, chronicle, "The Drowned Century", "timeline");
    label(h, drowned, "gmOnly");
    const vote = event(h, drowned, "The Sunken Vote", "1188-01-01");
    const flood = event(
      h,
      bells,
      "The Brine Flood",
      "1187-03-14",
      "<p>The sea rose for three nights.</p><p>The lower town was lost.</p>",
    );
    label(h, flood, "shareDateLabel", "14th of Brinemonth, 1187");
    relation(h, flood, "relLocatedIn", W.locHarbor);
    const wreck = createLoreNote(store, W.guide, "Wreck of the Heron", "location");
    label(h, wreck, "draft");
    relation(h, flood, "relLocatedIn", wreck); // a hidden place
    relation(h, flood, "relAlly", W.charMira); // not a place
    const tower = event(h, bells, "The Bell Tower Falls", "1186-11-02");
    label(h, tower, "shareDescription", "The tower slid into the sea.");
    const pact = event(h, lanterns, "The Lantern Pact", "1190-09-02");
    const riot = event(h, W.guide, "The Salt Riot", "1189-05-01");
    const sinking = event(h, W.guide, "The Heron Sinks", "1189-01-01");
    label(h, sinking, "draft"); // a hidden event

    const body = await timeline(h);
    assert.match(
      body,
      /<nav class="breadcrumbs" aria-label="Breadcrumbs"><ol><li><a href="\/">Player&#39;s Guide<\/a><\/li><li aria-current="page">Timeline<\/li><\/ol><\/nav><h1>Timeline<\/h1>/,
    );
    assert.ok(
      body.includes(
        `The world's own timelines: <a href="/public/lore/${chronicle}">Chronicle of the Isles</a> (Isle Reckoning)</p>`,
      ),
    );
    // eras in the order of their first event; events in no era last
    assert.deepEqual(headings(body), [
      `<a href="/public/lore/${bells}">The Age of Bells</a>`,
      `<a href="/public/lore/${lanterns}">The Lantern Years</a>`,
      "Other events",
    ]);
    assert.match(body, /The Age of Bells<\/a><\/h2><p class="meta">When every harbour rang/);
    const order = [tower, flood, pact, riot].map((id) => body.indexOf(`/public/lore/${id}"`));
    assert.deepEqual([...order].sort((a, b) => a - b), order);
    assert.equal(
      entry(body, flood),
      `<li><time>14th of Brinemonth, 1187</time><a href="/public/lore/${flood}">The Brine Flood</a>` +
        `<p class="timeline-summary">The sea rose for three nights.</p>` +
        `<p class="meta">Where: <a href="/public/lore/${HARBOR_ALIAS}">Saltmarrow Harbor</a></p></li>`,
    );
    assert.equal(
      entry(body, tower),
      `<li><time>1186-11-02</time><a href="/public/lore/${tower}">The Bell Tower Falls</a>` +
        `<p class="timeline-summary">The tower slid into the sea.</p></li>`,
    );
    assert.match(entry(body, pact), /^<li><time>1190-09-02<\/time>/);
    for (const hidden of ["The Drowned Century", "The Sunken Vote", "Wreck of the Heron"]) {
      assert.ok(!body.includes(hidden), `shows ${hidden}`);
    }
    for (const id of [drowned, vote, wreck, sinking]) assert.ok(!body.includes(id), `shows ${id}`);
    assert.ok(!body.includes("The Heron Sinks"));
  }));

Deno.test("site: without eras the timeline goes by year, numbers as numbers, other dates last", () =>
  withHarness(async (h) => {
    // one chronicle is the world's calendar, not an era
    const chronicle = createLoreNote(h.core.store, W.guide, "Chronicle of the Coast", "timeline");
    const flood = event(h, chronicle, "The Brine Flood", "1187-03-14");
    const riot = event(h, W.guide, "The Salt Riot", "1187-05-01");
    const founding = event(h, W.guide, "The Founding", "-1000");
    const landing = event(h, W.guide, "The Landing", "-300");
    const night = event(h, W.guide, "The Long Night", "Year of the Long Night");
    const body = await timeline(h);
    assert.deepEqual(headings(body), ["-1000", "-300", "1187", "Other dates"]);
    const order = [founding, landing, flood, riot, night].map((id) => body.indexOf(`${id}"`));
    assert.deepEqual([...order].sort((a, b) => a - b), order);
    assert.match(entry(body, night), /^<li><time>Year of the Long Night<\/time>/);
    assert.ok(body.includes(`timelines: <a href="/public/lore/${chronicle}">Chronicle of the`));
  }));

Deno.test("site: a timeline place behind a password the visitor lacks, or kept private, is not shown", () =>
  withHarness(async (h) => {
    const counting = createLoreNote(h.core.store, W.guideVault, "The Counting Room", "location");
    const audit = event(h, W.guide, "The Great Audit", "1189");
    relation(h, audit, "relLocatedIn", counting); // behind the vault's password
    const toll = event(h, W.guide, "The Harbour Toll", "1190");
    relation(h, toll, "relLocatedIn", W.locHarbor);
    label(h, toll, "sharePrivateFields", "relLocatedIn");

    const anonymous = await timeline(h);
    assert.equal(
      entry(anonymous, audit),
      `<li><time>1189</time><a href="/public/lore/${audit}">The Great Audit</a>` +
        `<p class="timeline-summary">The Great Audit in the salt.</p></li>`,
    );
    assert.ok(!anonymous.includes("The Counting Room") && !anonymous.includes(counting));
    assert.ok(!entry(anonymous, toll).includes("Where:"), "a private relation is no place");
  }));

Deno.test("site: the showcase's timeline shows its eras, written dates and places", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const body = await timeline(h);
    assert.deepEqual(headings(body).map((h) => h.replace(/<[^>]+>/g, "")), [
      "The Age of Bells",
      "The Lantern Years",
    ]);
    assert.ok(
      entry(body, W.eventFlood).includes(
        `<time>14th of Brinemonth, 1187 SR</time><a href="/public/lore/${W.eventFlood}">` +
          `The Brine Flood</a><p class="timeline-summary">The sea rose for three nights and ` +
          `took the lower town.</p><p class="meta">Where: <a href="/public/lore/${HARBOR_ALIAS}">` +
          `Saltmarrow Harbor</a>, <a href="/public/lore/${W.locLighthouse}">Greyfin Lighthouse</a>`,
      ),
    );
    assert.match(body, /\(Saltmarrow Reckoning\)/);
  }));
