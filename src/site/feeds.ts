/**
 * The site for machines: `sitemap.xml` (every public page) and an Atom feed of recently changed
 * public notes. Both are built from what an anonymous visitor sees, with absolute URLs.
 *
 * @module
 */
import { escapeHtml } from "../lore/preview.ts";
import { loreHref } from "./format.ts";
import type { SiteFrame } from "./site_model.ts";

/** A page listed in the sitemap. */
export interface SitemapEntry {
  /** Site-relative URL. */
  path: string;
  /** ISO 8601, when known. */
  lastModified?: string | null;
}

/** A changed note in the feed. */
export interface FeedEntry {
  /** URL id (`#shareAlias` or noteId). */
  id: string;
  title: string;
  /** ISO 8601. */
  updated: string;
  summary: string;
}

/** Notes in the feed: the most recently changed. */
export const FEED_SIZE = 20;

const xml = (value: string) => escapeHtml(value);

/**
 * A sitemap (sitemaps.org 0.9) of the given pages.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const doc = sitemapXml("https://lore.example.org", [{ path: "/", lastModified: null }]);
 * assert.match(doc, /<loc>https:\/\/lore.example.org\/<\/loc>/);
 * ```
 */
export function sitemapXml(origin: string, entries: readonly SitemapEntry[]): string {
  const urls = entries.map((e) =>
    `  <url><loc>${xml(origin + e.path)}</loc>${
      e.lastModified ? `<lastmod>${xml(e.lastModified)}</lastmod>` : ""
    }</url>`
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls.join("\n")}
</urlset>
`;
}

/**
 * An Atom feed of changed notes, newest first (the caller orders and limits them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const site = {
 *   title: "The Coast",
 *   description: "Salt towns.",
 *   tree: { noteId: "root1", id: "root1", title: "The Coast", children: [] },
 *   loreTypes: [],
 *   maps: [],
 *   hasTimeline: false,
 *   card: { path: "/public/card/k.png", alt: "The Coast", width: 1200, height: 630 },
 *   origin: "https://lore.example.org",
 * };
 * const feed = atomFeed(site, [
 *   { id: "mira", title: "Mira", updated: "2026-03-01T09:05:00.000Z", summary: "A pilot." },
 * ]);
 * assert.match(feed, /<entry>[\s\S]*<link href="https:\/\/lore.example.org\/public\/lore\/mira"\/>/);
 * ```
 */
export function atomFeed(site: SiteFrame, entries: readonly FeedEntry[]): string {
  const updated = entries[0]?.updated ?? new Date(0).toISOString();
  const items = entries.map((e) => {
    const url = site.origin + loreHref(e.id);
    return `  <entry>
    <title>${xml(e.title)}</title>
    <link href="${xml(url)}"/>
    <id>${xml(url)}</id>
    <updated>${xml(e.updated)}</updated>
${e.summary ? `    <summary>${xml(e.summary)}</summary>\n` : ""}  </entry>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>${xml(site.title)}</title>
${site.description ? `  <subtitle>${xml(site.description)}</subtitle>\n` : ""}  <link href="${
    xml(site.origin + "/")
  }"/>
  <link rel="self" href="${xml(site.origin + "/public/feed.atom")}"/>
  <id>${xml(site.origin + "/")}</id>
  <updated>${xml(updated)}</updated>
  <author><name>${xml(site.title)}</name></author>
${items.join("\n")}
</feed>
`;
}
