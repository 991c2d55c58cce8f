import assert from "node:assert/strict";
import { parseLikeBrowser } from "./browser_tree.ts";
import { sanitizeLoreHtml, sanitizePlayerHtml } from "./html.ts";
import { htmlEngine, loadHtmlEngine } from "./html_engine.ts";
import { htmlToText } from "./plain_text.ts";

// These run in this order in a fresh isolate: nothing imported above loads the engine.

Deno.test("html engine: before it is loaded, parsing and sanitizing throw (fail closed)", () => {
  const xss = '<p>Hi<script>alert(1)</script><span class="gm-only">secret</span></p>';
  for (
    const use of [
      () => sanitizeLoreHtml(xss),
      () => sanitizePlayerHtml(xss),
      () => htmlToText(xss),
      () => parseLikeBrowser(xss),
      () => htmlEngine(),
    ]
  ) {
    assert.throws(use, /HTML engine is not loaded/);
  }
});

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
