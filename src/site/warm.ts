/**
 * The site made ready for a new snapshot before any visitor asks: after a write through the
 * service, the writer's answer waits for this, so the next visitor's page costs what a page
 * costs, not what a new snapshot costs.
 *
 * @module
 */
import type { VisitorView } from "../share/public_api.ts";
import { siteNavigation } from "./navigation.ts";
import { siteFrame } from "./site_model.ts";

/**
 * Makes what every page of a new snapshot shares: the site's frame and its navigation markup,
 * which notes link where (every visible note's reading, behind each page's backlinks) and which
 * relations point at each note (behind each page's "Related").
 */
export async function warmSite(view: VisitorView): Promise<void> {
  const [frame] = await Promise.all([siteFrame(view, ""), view.backlinksTo(view.rootId)]);
  siteNavigation(frame, undefined);
  view.relatedFrom(view.rootId);
}
