/**
 * `deno task bench:sanitize`: the cost of the player sanitizer (browser-exact parse, gm-only
 * removal, allow-list, re-parse check) and of the share-tree filter, as ratios against baselines
 * measured in the same run: sanitize-html with its default options over the same HTML, and
 * `JSON.parse` of the same snapshot. Absolute numbers depend on the machine; the ratios are what
 * to compare between versions.
 *
 * Options (env): BENCH_ROUNDS (default 15).
 *
 * @module
 */
// @ts-types="@types/sanitize-html"
import sanitizeHtml from "sanitize-html";
import { sanitizePlayerHtml } from "../src/sanitize/html.ts";
import { loadHtmlEngine } from "../src/sanitize/html_engine.ts";
import { buildShareView, type ShareNote } from "../src/share/tree_filter.ts";
import { median } from "./stats.ts";

await loadHtmlEngine();

const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 15);

/** Milliseconds per run of `fn`, median over the rounds (after one warm-up). */
function time(fn: () => unknown): number {
  fn();
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

// A 360 kB note of what the editor writes: formatting, links, images, tables, gm-only parts.
const block = '<p style="text-align:center">Lore <strong>text</strong> with ' +
  '<a class="reference-link" href="#root/a/AbC123">a link</a>.</p>' +
  '<figure class="image"><img src="api/images/AbC123/map.png" width="300"></figure>' +
  '<div class="gm-only"><p>secret</p></div><table><tbody><tr><td>a</td></tr></tbody></table>';
const html = block.repeat(1400);

// 5000 notes: a binary tree with upward clones (cycles), aliases and a few drafts.
const notes: ShareNote[] = Array.from({ length: 5000 }, (_, i) => ({
  noteId: `n${i}`,
  title: `${i}`,
  isProtected: false,
  parentNoteIds: [],
  childNoteIds: [2 * i + 1, 2 * i + 2].filter((c) => c < 5000).map((c) => `n${c}`)
    .concat(i > 10 && i % 7 === 0 ? [`n${i % 10}`] : []),
  attributes: [
    { noteId: `n${i}`, type: "label", name: "lore", value: "", isInheritable: false },
    ...(i % 501 === 0 && i > 0
      ? [{ noteId: `n${i}`, type: "label" as const, name: "draft", value: "", isInheritable: true }]
      : []),
  ],
}));
const snapshotJson = JSON.stringify({ rootId: "n0", notes });

const rows = [
  {
    what: "player sanitizer, 360 kB note",
    ours: time(() => sanitizePlayerHtml(html)),
    base: time(() => sanitizeHtml(html)),
    baseline: "sanitize-html defaults",
  },
  {
    what: "share filter, 5000 notes",
    ours: time(() => buildShareView({ rootId: "n0", notes })),
    base: time(() => JSON.parse(snapshotJson)),
    baseline: "JSON.parse of the snapshot",
  },
];

console.log("| Work | Ours (ms) | Baseline | Baseline (ms) | Ratio |");
console.log("| --- | --- | --- | --- | --- |");
for (const r of rows) {
  console.log(
    `| ${r.what} | ${r.ours.toFixed(1)} | ${r.baseline} | ${r.base.toFixed(1)} | ${
      (r.ours / r.base).toFixed(2)
    }× |`,
  );
}
