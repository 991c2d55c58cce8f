/**
 * Every way a published note can link another note, shown on one note each: a link naming a
 * public note goes to its public page; one naming a hidden note, or a note outside the share,
 * loses its href, and its text when that text may name the target — in the API answer, on the
 * page and in the public search alike.
 */
import assert from "node:assert/strict";
import { REDACTION_HTML, REDACTION_TEXT } from "../../src/sanitize/redaction.ts";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { HARBOR_ALIAS, W } from "../../sims/world.ts";

/** A note of the share the public may not see, and one outside the share. */
const DRAFT = { title: "Cult of the Ninth Tide", alias: "ninth-tide" };
const OUTSIDE = { title: "Widow Harrowgate Confesses", alias: "harrowgate" };

interface Planted {
  draftId: string;
  outsideId: string;
}

function plantTargets(h: Harness): Planted {
  const store = h.core.store;
  const draft = store.createNote({
    parentNoteId: W.guide,
    title: DRAFT.title,
    type: "text",
    content: "<p>The cult meets below the pier.</p>",
  }).note;
  store.createAttribute({ noteId: draft.noteId, type: "label", name: "draft", value: "" });
  store.createAttribute({
    noteId: draft.noteId,
    type: "label",
    name: "shareAlias",
    value: DRAFT.alias,
  });
  const outside = store.createNote({
    parentNoteId: W.loreRoot,
    title: OUTSIDE.title,
    type: "text",
    content: "<p>Never shared.</p>",
  }).note;
  store.createAttribute({
    noteId: outside.noteId,
    type: "label",
    name: "shareAlias",
    value: OUTSIDE.alias,
  });
  return { draftId: draft.noteId, outsideId: outside.noteId };
}

/** A published note (under the share root) with this content; its id. */
function publish(h: Harness, content: string): string {
  return h.core.store.createNote({
    parentNoteId: W.guide,
    title: "Links Everywhere",
    type: "text",
    content,
  }).note.noteId;
}

const encodeAll = (text: string) =>
  [...new TextEncoder().encode(text)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");

/** Every form a link to a note can take, by id and, where the form allows, by alias. */
function forms(id: string, alias: string): [form: string, href: string][] {
  return [
    ["root path", `#root/${W.loreRoot}/${id}`],
    ["root path on Core's URL", `http://core.internal:8080/#root/${id}`],
    ["share URL by id", `http://core.internal:8080/share/${id}`],
    [
      "share URL by alias, other host, query, fragment",
      `HTTPS://Lore.Example.Org/share/${alias}?x=1#y`,
    ],
    ["share URL, base path", `https://notes.example/trilium/share/${alias}`],
    ["/share/ID", `/share/${id}`],
    ["/share/ALIAS", `/share/${alias}`],
    ["share/ALIAS", `share/${alias}`],
    ["../share/ALIAS", `../share/${alias}`],
    ["percent-encoded alias", `/share/${encodeAll(alias)}`],
    ["percent-encoded id", `../share/${encodeAll(id)}`],
    ["./ID", `./${id}`],
    ["./ALIAS", `./${alias}`],
    ["ID", id],
    ["spaces around", `  ./${alias}\n`],
    ["api/notes/ID/download", `api/notes/${id}/download`],
    ["/share/api/notes/ID", `/share/api/notes/${id}`],
    ["/etapi/notes/ID", `http://core.internal:8080/etapi/notes/${id}/content`],
    ["api/images/ID/FILE", `api/images/${id}/x.png`],
    ["our public page", `/public/lore/${alias}`],
  ];
}

async function publicNote(h: Harness, id: string): Promise<{ html: string; text: string }> {
  const res = await h.request(`/api/public/lore/${id}`);
  assert.equal(res.status, 200);
  const text = await res.text();
  return { html: JSON.parse(text).contentHtml, text };
}

async function page(h: Harness, id: string): Promise<string> {
  const res = await h.request(`/public/lore/${id}`);
  assert.equal(res.status, 200);
  return await res.text();
}

/** One paragraph of the answer, found by the label it starts with. */
function paragraph(html: string, label: string): string {
  const start = html.indexOf(`<p>${label}: `);
  assert.notEqual(start, -1, `no paragraph "${label}" in ${html}`);
  return html.slice(start, html.indexOf("</p>", start) + "</p>".length);
}

Deno.test("links: every form naming a public note goes to its public page", () =>
  withHarness(async (h) => {
    const rows = forms(W.locHarbor, HARBOR_ALIAS);
    const id = publish(
      h,
      rows.map(([form, href]) => `<p>${form}: <a href="${href}">the harbour</a></p>`).join(""),
    );
    // the share root by Core's own spellings of it
    const root = publish(h, '<p>a: <a href="./">home</a></p><p>b: <a href="/share/">home</a></p>');
    const { html } = await publicNote(h, id);
    for (const [form] of rows) {
      assert.equal(
        paragraph(html, form),
        `<p>${form}: <a href="/public/lore/${HARBOR_ALIAS}">the harbour</a></p>`,
        form,
      );
    }
    const rootHtml = (await publicNote(h, root)).html;
    for (const label of ["a", "b"]) {
      assert.equal(
        paragraph(rootHtml, label),
        `<p>${label}: <a href="/public/lore/${W.guide}">home</a></p>`,
      );
    }
    // and the page shows the same links
    assert.ok(
      (await page(h, id)).includes(`<a href="/public/lore/${HARBOR_ALIAS}">the harbour</a>`),
    );
  }));

Deno.test("links: every form naming a hidden note drops the title, and the link", () =>
  withHarness(async (h) => {
    const { draftId } = plantTargets(h);
    const rows = forms(draftId, DRAFT.alias);
    const texts = [
      DRAFT.title, // the title, as Core's reference links and typed links have it
      "the Ninth Tide", // inside of it
      `all about the ${DRAFT.title} and more`, // containing it
    ];
    const id = publish(
      h,
      rows.flatMap(([form, href]) =>
        texts.map((text, i) => `<p>${form} ${i}: <a href="${href}">${text}</a></p>`)
      ).join(""),
    );
    const { html, text } = await publicNote(h, id);
    for (const [form] of rows) {
      for (const i of [0, 1, 2]) {
        assert.equal(paragraph(html, `${form} ${i}`), `<p>${form} ${i}: ${REDACTION_HTML}</p>`);
      }
    }
    const pageHtml = await page(h, id);
    for (const shown of [text, pageHtml]) {
      for (const name of ["Ninth Tide", DRAFT.alias, draftId]) {
        assert.ok(!shown.includes(name), `shows ${name}`);
      }
    }
  }));

Deno.test("links: text typed about a hidden note of the share stays, unlinked; Core's bare links go", () =>
  withHarness(async (h) => {
    const { draftId } = plantTargets(h);
    const rows = forms(draftId, DRAFT.alias);
    const id = publish(
      h,
      rows.map(([form, href]) => `<p>${form}: <a href="${href}">old rumours</a></p>`).join(""),
    );
    const { html } = await publicNote(h, id);
    for (const [form, href] of rows) {
      // `./<ref>` and `<ref>` are what Core's share pages write, with the title as the text
      const bare = /^\s*(?:\.\/)?[^/:#]+\s*$/.test(href);
      assert.equal(
        paragraph(html, form),
        bare ? `<p>${form}: ${REDACTION_HTML}</p>` : `<p>${form}: <a>old rumours</a></p>`,
        form,
      );
    }
  }));

Deno.test("links: a note outside the share is unknown, so any text of a link to it goes", () =>
  withHarness(async (h) => {
    const { outsideId } = plantTargets(h);
    const rows = forms(outsideId, OUTSIDE.alias);
    const id = publish(
      h,
      rows.flatMap(([form, href]) => [
        `<p>${form} 0: <a href="${href}">${OUTSIDE.title}</a></p>`,
        `<p>${form} 1: <a href="${href}">old rumours</a></p>`,
      ]).join(""),
    );
    const { html, text } = await publicNote(h, id);
    for (const [form] of rows) {
      for (const i of [0, 1]) {
        assert.equal(paragraph(html, `${form} ${i}`), `<p>${form} ${i}: ${REDACTION_HTML}</p>`);
      }
    }
    const pageHtml = await page(h, id);
    for (const shown of [text, pageHtml]) {
      for (const name of ["Harrowgate", OUTSIDE.alias, outsideId, "old rumours"]) {
        assert.ok(!shown.includes(name), `shows ${name}`);
      }
    }
  }));

Deno.test("links: the public search finds no note by the title of a note it links to but hides", () =>
  withHarness(async (h) => {
    const { draftId, outsideId } = plantTargets(h);
    const links = (id: string, alias: string, title: string, part: string) =>
      forms(id, alias).map(([form, href]) =>
        `<p>${form}: <a href="${href}">${title}</a> <a href="${href}">the ${part} story</a></p>`
      ).join("");
    publish(
      h,
      links(draftId, DRAFT.alias, DRAFT.title, "Ninth Tide") +
        links(outsideId, OUTSIDE.alias, OUTSIDE.title, "Widow Harrowgate"),
    );
    for (const q of [DRAFT.title, "Ninth", OUTSIDE.title, "Harrowgate", DRAFT.alias, draftId]) {
      const api = await h.request(`/api/public/search?q=${encodeURIComponent(q)}`);
      assert.deepEqual((await api.json()).results, [], q);
      const site = await h.request(`/?q=${encodeURIComponent(q)}`);
      assert.match(await site.text(), /role="status">0 results for/, q);
    }
    // the note itself is still found by what it shows
    const found = await h.request("/api/public/search?q=links%20everywhere");
    assert.equal((await found.json()).results.length, 1);
  }));

Deno.test("links: where a link went, the sentence reads on with the same mark everywhere", () =>
  withHarness(async (h) => {
    const { draftId, outsideId } = plantTargets(h);
    const sentence = (link: string) => `<p>Quillon trusts ${link} more than she should.</p>`;
    const ids = [
      publish(h, sentence(`<a class="reference-link" href="#root/${draftId}">${DRAFT.title}</a>`)),
      publish(h, sentence(`<a href="./${OUTSIDE.alias}">the widow</a>`)),
      publish(h, sentence(`<a href="/share/${outsideId}">${OUTSIDE.title}, who knows</a>`)),
    ];
    const shown = `Quillon trusts ${REDACTION_TEXT} more than she should.`;
    for (const id of ids) {
      // the API's content and the page: the mark, whatever the link named
      assert.equal((await publicNote(h, id)).html, sentence(REDACTION_HTML));
      const pageHtml = await page(h, id);
      assert.ok(pageHtml.includes(sentence(REDACTION_HTML)), "page content");
      // the description read from the first paragraph
      assert.ok(pageHtml.includes(`<meta name="description" content="${shown}">`), "description");
    }
    // the search reads the same text: the excerpt, and words on both sides still match
    const res = await h.request("/?q=Quillon");
    const results = await res.text();
    assert.equal(results.split(`</mark> trusts ${REDACTION_TEXT} more than she should.`).length, 4);
    const found = await h.request("/api/public/search?q=trusts%20more%20should");
    const hits = (await found.json()).results.map((r: { id: string }) => r.id);
    assert.deepEqual(hits.filter((id: string) => ids.includes(id)).sort(), [...ids].sort());
  }));
