/**
 * Error pages are titled with the world's name once the share has been read (it is public: every
 * page shows it), the neutral name while nothing is published.
 */
import assert from "node:assert/strict";
import { withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

Deno.test("site: error pages carry the world's name once the share is read, not a hidden note's", () =>
  withHarness(async (h) => {
    const missing = await h.request("/public/lore/noSuchNote99");
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /<title>Not found · Player&#39;s Guide<\/title>/);
    // a hidden note's page is the same 404, named for the world only
    const hidden = await h.request(`/public/lore/${W.guideDraft}`);
    assert.equal(hidden.status, 404);
    assert.match(await hidden.text(), /<title>Not found · Player&#39;s Guide<\/title>/);
    // nothing published: the neutral name
    const unshare = await h.request("/api/share", { method: "PUT", json: { noteId: null } });
    assert.equal(unshare.status, 200);
    const after = await h.request("/public/lore/noSuchNote99");
    assert.match(await after.text(), /<title>Not found · Shared lore<\/title>/);
  }));
