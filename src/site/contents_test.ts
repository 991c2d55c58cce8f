import assert from "node:assert/strict";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import { withContents } from "./contents.ts";

await loadHtmlEngine();

Deno.test("contents: fewer than three headings leave the HTML as it was", () => {
  const html = "<h2>One</h2><p>a</p><h3>Two</h3>";
  assert.deepEqual(withContents(html), { html, entries: [] });
});

Deno.test("contents: repeated headings get distinct ids; inline markup is read as text", () => {
  const { html, entries } = withContents(
    "<h2>Trade</h2><h2>Trade</h2><h3>Salt &amp; <em>tar</em></h3><h4>Café Noir</h4><h5>Deep</h5>",
  );
  assert.deepEqual(entries.map((e) => e.id), ["h-trade", "h-trade-2", "h-salt-tar", "h-cafe-noir"]);
  assert.deepEqual(entries.map((e) => e.text), ["Trade", "Trade", "Salt & tar", "Café Noir"]);
  assert.match(html, /<h3 id="h-salt-tar">Salt &amp; <em>tar<\/em><\/h3>/);
  assert.match(html, /<h5>Deep<\/h5>/); // h5 and below are not listed
});

Deno.test("contents: a heading with no text or an id of its own is left out", () => {
  const { entries } = withContents(
    '<h2>A</h2><h2 id="kept">B</h2><h2><img src="/x.png" alt=""></h2><h2>C</h2><h2>D</h2>',
  );
  assert.deepEqual(entries.map((e) => e.text), ["A", "C", "D"]);
});
