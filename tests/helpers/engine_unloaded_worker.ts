/**
 * Worker entry for src/sanitize/html_engine_test.ts: before the HTML engine is loaded, every
 * function that parses or sanitizes throws instead of passing HTML through (fail closed).
 *
 * @module
 */
import assert from "node:assert/strict";
import { parseLikeBrowser } from "../../src/sanitize/browser_tree.ts";
import { sanitizeLoreHtml, sanitizePlayerHtml } from "../../src/sanitize/html.ts";
import { htmlEngine } from "../../src/sanitize/html_engine.ts";
import { htmlToText } from "../../src/sanitize/plain_text.ts";
import { answerInWorker } from "./fresh_isolate.ts";

answerInWorker(() => {
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
