import assert from "node:assert/strict";
import { sanitizeLoreHtml, sanitizePlayerHtml } from "./html.ts";
import { htmlEngine, loadHtmlEngine } from "./html_engine.ts";
import { htmlToText } from "./plain_text.ts";
import { inFreshIsolate } from "../../tests/helpers/fresh_isolate.ts";

Deno.test("html engine: before it is loaded, parsing and sanitizing throw (fail closed)", () =>
  inFreshIsolate(new URL("../../tests/helpers/engine_unloaded_worker.ts", import.meta.url), null));

Deno.test("html engine: loads once; then the same calls sanitize", async () => {
  const [first, second] = await Promise.all([loadHtmlEngine(), loadHtmlEngine()]);
  assert.equal(first, second);
  assert.equal(await loadHtmlEngine(), first);
  assert.equal(htmlEngine(), first);
  const xss = '<p>Hi<script>alert(1)</script><span class="gm-only">secret</span></p>';
  assert.equal(sanitizeLoreHtml(xss), '<p>Hi<span class="gm-only">secret</span></p>');
  assert.equal(sanitizePlayerHtml(xss), "<p>Hi</p>");
  assert.equal(htmlToText(xss), "Hi secret");
});
