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
.site-header, main, .site-footer { max-width: 48rem; margin: 0 auto; padding: 1rem; }
.site-header { display: flex; flex-wrap: wrap; gap: .75rem 1.5rem; align-items: center;
  justify-content: space-between; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; font-size: 1.15rem; text-decoration: none; }
.search { display: flex; gap: .5rem; flex: 1 1 16rem; max-width: 24rem; }
.search input { flex: 1; min-width: 0; padding: .45rem .6rem; font: inherit;
  border: 1px solid var(--line); border-radius: .4rem; background: var(--card); color: inherit; }
.search button { padding: .45rem .9rem; font: inherit; border: 0; border-radius: .4rem;
  background: var(--accent); color: var(--bg); cursor: pointer; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; }
h1 { line-height: 1.2; margin: .5rem 0; overflow-wrap: anywhere; }
.kicker, .meta, .path { color: var(--muted); font-size: .9rem; margin: 0; }
.portrait { float: right; max-width: min(40%, 14rem); margin: 0 0 1rem 1rem;
  border-radius: .5rem; border: 1px solid var(--line); }
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
.groups { display: grid; grid-template-columns: repeat(auto-fit, minmax(13rem, 1fr)); gap: 1rem; }
.group { background: var(--card); border: 1px solid var(--line); border-radius: .5rem;
  padding: .25rem 1rem; }
.group h3 { margin: .5rem 0; font-size: 1.05rem; }
section { clear: both; }
.site-footer { color: var(--muted); font-size: .85rem; border-top: 1px solid var(--line); }
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
