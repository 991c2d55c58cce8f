/**
 * The public site's stylesheet, as code: `deno compile` embeds it, nothing is read from disk at
 * run time. Served at `/public/site.css` (the CSP allows styles from our origin only, so no page
 * carries inline styles).
 *
 * @module
 */
import { createHash } from "node:crypto";

/**
 * The CSS: one readable column, system fonts, light and dark schemes, visible focus, and a
 * layout that needs no media query below ~40rem.
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
  :root { --bg: #16181c; --fg: #e6e6e6; --muted: #a3abb5; --line: #343a42;
    --accent: #7cb8ff; --card: #1e2126; }
}
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
.tree summary { cursor: pointer; }
.tree a { text-decoration: none; }
.tree a:hover { text-decoration: underline; }
.tree a[aria-current="page"] { font-weight: 700; color: var(--fg); }
.breadcrumbs ol { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 0;
  padding: 0; font-size: .9rem; color: var(--muted); }
.breadcrumbs li + li::before { content: "/"; margin-right: .25rem; }
.infobox { float: right; width: min(45%, 16rem); margin: 0 0 1rem 1rem; padding: .75rem;
  background: var(--card); border: 1px solid var(--line); border-radius: .5rem; }
@media (max-width: 36rem) { .infobox { float: none; width: auto; margin: 0 0 1rem; } }
.infobox .details { grid-template-columns: minmax(0, max-content) minmax(0, 1fr); font-size: .9rem; }
.portrait-link { display: block; margin-bottom: .5rem; }
.portrait { display: block; width: 100%; height: auto; border-radius: .35rem; }
.content { overflow-wrap: anywhere; }
.content img { max-width: 100%; height: auto; }
.content table { border-collapse: collapse; display: block; overflow-x: auto; }
.content td, .content th { border: 1px solid var(--line); padding: .25rem .5rem; }
.details { display: grid; grid-template-columns: minmax(6rem, max-content) 1fr; gap: .25rem 1rem;
  margin: 0; }
.details dt { font-weight: 600; }
.details dd { margin: 0; overflow-wrap: anywhere; }
.links { padding-left: 1.2rem; }
.links li { margin: .25rem 0; }
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
.timeline li { padding: .25rem 0 .25rem 1rem; }
.timeline time { font-weight: 600; font-variant-numeric: tabular-nums; }
.map { margin: 1rem 0; }
.map svg { display: block; width: 100%; height: auto; border: 1px solid var(--line);
  border-radius: .5rem; }
.pin circle { fill: #c2410c; stroke: #fff; stroke-width: 2; }
.pin text { fill: #fff; stroke: #1f2328; stroke-width: 3; paint-order: stroke;
  font-family: inherit; font-weight: 700; }
.pin:hover circle, .pin:focus circle { fill: var(--accent); }
.pager { display: flex; justify-content: space-between; gap: 1rem; flex-wrap: wrap;
  margin-top: 2rem; padding-top: 1rem; border-top: 1px solid var(--line); }
.pager a[rel="next"] { margin-left: auto; text-align: right; }
section { clear: both; }
.site-footer { color: var(--muted); font-size: .85rem; border-top: 1px solid var(--line); }
@media print {
  .site-nav, .search, .skip, .pager, .site-footer { display: none; }
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
export const SITE_CSS_VERSION: string = createHash("sha256").update(SITE_CSS).digest("base64url")
  .slice(0, 16);
