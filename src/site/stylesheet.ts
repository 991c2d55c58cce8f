/**
 * The public site's stylesheet, as code: `deno compile` embeds it, nothing is read from disk at
 * run time. Served at `/public/site.css` (the CSP allows styles from our origin only, so no page
 * carries inline styles).
 *
 * @module
 */
import { assetVersion } from "./headers.ts";

/** The dark scheme's colours: the system's when it prefers dark, or the visitor's choice. */
const DARK = `--bg: #16181c; --fg: #e6e6e6; --muted: #a3abb5; --line: #343a42;
    --accent: #7cb8ff; --card: #1e2126;`;

/**
 * The CSS: one readable column, system fonts, light and dark schemes (the system's, or the one a
 * visitor chose with the theme script), visible focus, and a layout that needs no media query
 * below ~40rem.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = new Response(SITE_CSS, { headers: { "content-type": "text/css; charset=utf-8" } });
 * assert.match(await res.text(), /^:root \{/);
 * ```
 */
export const SITE_CSS = `:root {
  color-scheme: light dark;
  --bg: #fbfaf7; --fg: #1f2328; --muted: #59606a; --line: #d9d4c7;
  --accent: #0b5cad; --card: #ffffff;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  line-height: 1.6;
}
@media (prefers-color-scheme: dark) {
  :root:not([data-theme=light]) { ${DARK} }
}
/* A visitor's choice (theme_script.ts sets data-theme) overrides the system's scheme. */
:root[data-theme=light] { color-scheme: light; }
:root[data-theme=dark] { color-scheme: dark; ${DARK} }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
a { color: var(--accent); }
a:not([href]) { color: inherit; }
a:focus-visible, input:focus-visible, button:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px;
}
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--card); padding: .5rem; z-index: 1; }
.site-header, .shell, .site-footer { max-width: 72rem; margin: 0 auto; padding: 1rem; }
.shell { display: grid; gap: 1.5rem; grid-template-columns: minmax(0, 1fr); }
main { min-width: 0; }
@media (min-width: 60rem) {
  .shell { grid-template-columns: 16rem minmax(0, 1fr); }
  .shell > main { grid-column: 2; grid-row: 1; }
  .shell > .site-nav { grid-column: 1; grid-row: 1; align-self: start; }
  .shell.single { grid-template-columns: minmax(0, 48rem); justify-content: center; }
}
.site-header { display: flex; flex-wrap: wrap; gap: .75rem 1.5rem; align-items: center;
  justify-content: space-between; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; font-size: 1.15rem; text-decoration: none; overflow-wrap: anywhere; }
.search { display: flex; gap: .5rem; flex: 1 1 16rem; max-width: 24rem; }
.search input { flex: 1; min-width: 0; padding: .45rem .6rem; font: inherit;
  border: 1px solid var(--muted); border-radius: .4rem; background: var(--card); color: inherit; }
.search button { padding: .45rem .9rem; font: inherit; border: 0; border-radius: .4rem;
  background: var(--accent); color: var(--bg); cursor: pointer; }
/* The theme script's button (absent without script). */
.theme-toggle { padding: .3rem .7rem; font: inherit; font-size: .9rem; color: var(--fg);
  border: 1px solid var(--muted); border-radius: .4rem; background: var(--card); cursor: pointer; }
@media print { .theme-toggle { display: none; } }
/* Phones: the navigation waits behind the header's Contents link, which targets it (#site-nav)
   and so opens it above the page, no script; "Close contents" (#main) puts it away again. */
.menu-link { display: inline-flex; align-items: center; min-height: 2.25rem; padding: 0 .75rem;
  border: 1px solid var(--muted); border-radius: .4rem; text-decoration: none; }
.nav-close { display: inline-block; min-height: 1.5rem; font-size: .9rem; }
@media not all and (min-width: 60rem) {
  .site-nav:not(:target) { display: none; }
  .site-nav:target { order: -1; border-top: 0; padding: 0 0 1rem; scroll-margin-top: .5rem;
    border-bottom: 1px solid var(--line); }
}
@media (min-width: 60rem) { .menu-link, .nav-close { display: none; } }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; }
h1 { line-height: 1.2; margin: .5rem 0; overflow-wrap: anywhere; }
.kicker, .meta, .path { color: var(--muted); font-size: .9rem; margin: 0; }
.site-nav { font-size: .95rem; border-top: 1px solid var(--line); padding-top: .5rem; }
@media (min-width: 60rem) { .site-nav { border-top: 0; padding-top: 0; } }
.nav-title { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em;
  color: var(--muted); margin: 1rem 0 .25rem; }
.tree, .tree ul { list-style: none; margin: 0; padding: 0; }
.tree ul { padding-left: 1rem; border-left: 1px solid var(--line); margin-left: .35rem; }
.tree li { margin: .15rem 0; overflow-wrap: anywhere; }
/* A branch: its note's link, and left of it the disclosure (a chevron, 24 px square) that opens
   the notes below; the link sits beside the <summary>, never inside it. */
.tree .branch { position: relative; padding-left: 1.5rem; }
.tree .branch > details > summary { position: absolute; left: 0; top: 0; width: 1.5rem;
  height: 1.5rem; list-style: none; cursor: pointer; border-radius: .25rem; }
.tree .branch > details > summary::-webkit-details-marker { display: none; }
.tree .branch > details > summary::before { content: ""; position: absolute; left: .5rem;
  top: .5rem; width: .4rem; height: .4rem; border: solid var(--fg); border-width: 0 2px 2px 0;
  transform: rotate(-45deg); }
.tree .branch > details[open] > summary::before { transform: rotate(45deg); }
.tree .branch > details > ul { margin-left: -.75rem; padding-left: 1.25rem; }
.tree summary:focus-visible { outline: 3px solid var(--accent); outline-offset: 0; }
.tree a { text-decoration: none; }
.tree a:hover { text-decoration: underline; }
.tree a[aria-current="page"] { font-weight: 700; color: var(--fg); }
.breadcrumbs ol { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 0;
  padding: 0; font-size: .9rem; color: var(--muted); }
.breadcrumbs li + li::before { content: "/"; margin-right: .25rem; }
/* Links that stand alone (lists, crumbs, a type's kicker) are tap targets of 24 px at least
   (WCAG 2.5.8); links inside sentences keep the line's height. */
.brand, .tree a, .links li > a, .cards li > a, .breadcrumbs a, .kicker a, .group h3 a,
.map-link, main > p > a:only-child {
  display: inline-block; min-width: 1.5rem; min-height: 1.5rem; }
.infobox { float: right; width: min(45%, 16rem); margin: 0 0 1rem 1rem; padding: .75rem;
  background: var(--card); border: 1px solid var(--line); border-radius: .5rem; }
@media (max-width: 36rem) { .infobox { float: none; width: auto; margin: 0 0 1rem; } }
.infobox .details { grid-template-columns: minmax(0, max-content) minmax(0, 1fr); font-size: .9rem; }
.portrait-link { display: block; margin-bottom: .5rem; }
/* Pictures at their own size (the width attribute), narrower where the column is: never wider. */
.portrait { display: block; max-width: 100%; height: auto; border-radius: .35rem; }
.content { overflow-wrap: anywhere; }
/* Where a link to an unpublished note went (src/sanitize/redaction.ts): its label is the tooltip. */
.redacted { color: var(--muted); cursor: help; }
.content img { max-width: 100%; height: auto; }
.content table { border-collapse: collapse; display: block; overflow-x: auto; }
.content td, .content th { border: 1px solid var(--line); padding: .25rem .5rem; }
.details { display: grid; grid-template-columns: minmax(6rem, max-content) 1fr; gap: .25rem 1rem;
  margin: 0; }
.details dt { font-weight: 600; }
.details dd { margin: 0; overflow-wrap: anywhere; }
.links { padding-left: 1.2rem; }
.links li { margin: .25rem 0; }
/* A character's or faction's relationship diagram (SVG, ~1 unit a px on a phone): the note in
   the middle, related notes as links around it, arrows for each relation's direction. */
.diagram { display: block; width: 100%; max-width: 30rem; height: auto; margin: .5rem 0; }
.diagram text { font-family: inherit; text-anchor: middle; }
.diagram .name { font-size: 14px; font-weight: 600; fill: var(--accent); }
.diagram .kind { font-size: 12px; fill: var(--muted); }
.diagram rect { fill: var(--card); stroke: var(--accent); stroke-width: 1.5; }
.diagram a:hover rect, .diagram a:focus-visible rect { stroke-width: 3; }
.diagram .more rect { stroke-dasharray: 4 3; }
.diagram .centre rect { fill: var(--fg); stroke: var(--fg); }
.diagram .centre .name { fill: var(--bg); }
.diagram .edge { stroke: var(--muted); stroke-width: 1.5; }
.diagram marker path { fill: var(--muted); }
.toc { border-left: 3px solid var(--line); padding: .25rem 0 .25rem 1rem; margin: 1rem 0; }
.toc h2 { font-size: 1rem; margin: 0 0 .25rem; }
.toc ol { list-style: none; margin: 0; padding: 0; }
.toc li { margin: .2rem 0; }
.toc li a { display: inline-block; min-height: 24px; }
.toc .l3 { padding-left: 1rem; }
.toc .l4 { padding-left: 2rem; }
.excerpt { margin: .15rem 0 .5rem; }
mark { background: #fde68a; color: #1f2328; }
.groups { display: grid; grid-template-columns: repeat(auto-fit, minmax(13rem, 1fr)); gap: 1rem; }
.group { background: var(--card); border: 1px solid var(--line); border-radius: .5rem;
  padding: .25rem 1rem; }
.group h3 { margin: .5rem 0; font-size: 1.05rem; }
.cards { list-style: none; padding: 0; display: grid; gap: .75rem;
  grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); }
.cards li { background: var(--card); border: 1px solid var(--line); border-radius: .5rem;
  padding: .5rem .75rem; }
.timeline { list-style: none; padding: 0; border-left: 2px solid var(--line); }
.timeline li { padding: .25rem 0 .25rem 1rem; position: relative; }
.timeline li::before { content: ""; position: absolute; left: -5px; top: .8rem; width: 8px;
  height: 8px; border-radius: 50%; background: var(--accent); }
.timeline time { font-weight: 600; font-variant-numeric: tabular-nums; }
.timeline-group h2 { font-size: 1.25rem; margin: 1.5rem 0 .25rem; }
.timeline-summary { margin: .1rem 0; overflow-wrap: anywhere; }
.map { margin: 1rem 0; }
/* The pins' SVG has no viewBox and lies over the image: pins stay their size at any zoom. Zoomed,
   the map scrolls inside its frame (a focusable region), never the page. */
.map-frame { overflow: auto; border: 1px solid var(--line); border-radius: .5rem; }
.map-canvas { position: relative; }
.map-canvas img { display: block; }
.map-frame:not(.zoom-full) img { width: 100%; height: auto; }
.map-frame.zoom-2 .map-canvas { width: 200%; }
.map-frame.zoom-4 .map-canvas { width: 400%; }
.map-frame.zoom-full .map-canvas { width: max-content; }
.map-pins { position: absolute; inset: 0; width: 100%; height: 100%; }
.map figcaption { margin-top: .25rem; }
.map figcaption a { display: inline-block; min-height: 24px; }
.map-zoom a { display: inline-block; min-width: 24px; min-height: 24px; padding: 0 .35rem;
  text-align: center; }
.map-zoom a[aria-current="page"] { font-weight: 700; color: var(--fg); }
.pin-target { fill: transparent; }
.pin-dot { fill: #c2410c; stroke: #fff; stroke-width: 2; }
.pin text { fill: #fff; stroke: #1f2328; stroke-width: 3; paint-order: stroke;
  font-family: inherit; font-weight: 700; }
.pin:hover .pin-dot, .pin:focus .pin-dot { fill: var(--accent); }
.pager { display: flex; justify-content: space-between; gap: 1rem; flex-wrap: wrap;
  margin-top: 2rem; padding-top: 1rem; border-top: 1px solid var(--line); }
.pager a[rel="next"] { margin-left: auto; text-align: right; }
section { clear: both; }
.site-footer { color: var(--muted); font-size: .85rem; border-top: 1px solid var(--line); }
/* A protected page's password form and its message; the footer's "Lock again". */
.unlock { max-width: 24rem; }
.unlock label { display: block; font-weight: 600; }
.unlock input { width: 100%; padding: .45rem .6rem; font: inherit; background: var(--card);
  border: 1px solid var(--muted); border-radius: .4rem; color: inherit; }
.unlock button, .lock button { min-height: 1.5rem; padding: .45rem .9rem; font: inherit;
  border: 0; border-radius: .4rem; background: var(--accent); color: var(--bg); cursor: pointer; }
.lock p { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; }
.lock button { padding: .2rem .75rem; }
.form-problem { border-left: 3px solid currentColor; padding-left: .75rem; font-weight: 600; }
@media print {
  .site-nav, .search, .skip, .pager, .site-footer, .menu-link { display: none; }
  .shell { display: block; max-width: none; }
  a { color: inherit; }
}
`;

/**
 * A short digest of {@linkcode SITE_CSS}: the stylesheet's ETag and cache-busting version.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // the stylesheet's URL changes with its content, so it can be cached for good
 * assert.match(`/public/site.css?v=${SITE_CSS_VERSION}`, /^\/public\/site\.css\?v=[\w-]+$/);
 * ```
 */
export const SITE_CSS_VERSION: string = assetVersion(SITE_CSS);
