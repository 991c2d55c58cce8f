/**
 * The public share at scale: a write through the service costs the note that changed (the
 * writer's answer waits for the share and that note to be read again; visitors then wait for
 * nothing), a restart with the same `DATA_DIR` serves its first page without reading every
 * note's content from Core again — while a blob changed on disk is never served — and the
 * share is read whole past the cap on other backend answers, up to its own. The pages visitors
 * read lately are made again from a new share before anyone asks for them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { credentialIdentity } from "../../src/credentials/identity.ts";
import { startOnDataDir, withDataDir } from "../helpers/data_dir.ts";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";
import { seedGeneratedWorld } from "../../sims/world_gen.ts";
import { eventually } from "../helpers/manual_deadlines.ts";
import { keptPublicAnswer } from "../../src/share/public_api.ts";
import { REMADE_MAX } from "../../src/share/public_snapshot.ts";

const page = (id: string) => `/public/lore/${encodeURIComponent(id)}`;

/** The titles a page lists under "Mentioned in" (its backlinks). */
function mentionedIn(html: string): string[] {
  const section = /<section[^>]*backlinks-title[\s\S]*?<\/section>/.exec(html)?.[0] ?? "";
  return [...section.matchAll(/<a [^>]*>([^<]*)<\/a>/g)].map((m) => m[1]);
}

/** Note ids whose content the service read from the Core double, in order. */
function contentReads(h: Harness): string[] {
  return h.core.requests.flatMap((r) => {
    const m = /^\/etapi\/notes\/([^/]+)\/content$/.exec(r.path);
    return m && r.method === "GET" ? [m[1]] : [];
  });
}

/**
 * The page of `id` as a repeat anonymous visit gets it without rendering (the kept answer's
 * body), or undefined when that visit would render it.
 */
function keptPage(h: Harness, id: string): string | undefined {
  const page = { subject: `note\n${h.url}`, noteIdOrAlias: id };
  return keptPublicAnswer(h.server.app.state.publicShare, "page", page, null)?.body;
}

async function text(h: Harness, path: string): Promise<string> {
  const res = await h.request(path);
  assert.equal(res.status, 200, path);
  return await res.text();
}

Deno.test("public share: a one-note write reads the share and that note again before answering; visitors then ask Core nothing", () =>
  withHarness(async (h) => {
    // every visible note read once: the harbor's page lists who links to it (its backlinks)
    const before = await text(h, page(W.locHarbor));
    assert.ok(contentReads(h).length >= 4, "the first page reads the notes' contents");
    const was = mentionedIn(before);
    assert.ok(was.includes("Mira Tallowend") && !was.includes("The Lantern Guild"), `${was}`);
    h.core.clearRequests();
    const put = await h.request(`/api/lore/${W.faction}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: `<p>The Guild keeps a lamp in <a href="#root/${W.locHarbor}">the harbor</a>.</p>`,
    });
    assert.equal(put.status, 204);
    // before answering, the write read the share again and the one note that changed
    assert.deepEqual(contentReads(h), [W.faction]);
    assert.equal(h.core.requests.filter((r) => r.path === "/etapi/notes").length, 3);
    h.core.clearRequests();
    const after = await text(h, page(W.locHarbor));
    // the new link is a backlink at once, and the visitor's page asked Core for nothing
    assert.deepEqual(mentionedIn(after).sort(), [...was, "The Lantern Guild"].sort());
    assert.deepEqual(h.core.requests.map((r) => r.path), [], "the visitor waited for nothing");
  }, { env: { PUBLIC_CACHE_MS: "600000" } }));

Deno.test("public share: the pages read lately are made again from the new share before the writer's answer", () =>
  withHarness(async (h) => {
    const before = await text(h, page(W.locHarbor));
    await text(h, page(W.charMira));
    assert.equal(keptPage(h, W.locHarbor), before, "a repeat visit gets the kept page");
    const put = await h.request(`/api/lore/${W.faction}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: `<p>The Guild keeps a lamp in <a href="#root/${W.locHarbor}">the harbor</a>.</p>`,
    });
    assert.equal(put.status, 204);
    // before anyone asks, the harbor's page is kept again, made from the new share
    const remade = keptPage(h, W.locHarbor);
    assert.ok(remade !== undefined, "the harbor's page was made again");
    assert.ok(mentionedIn(remade).includes("The Lantern Guild"), "from the new share");
    assert.equal(await text(h, page(W.locHarbor)), remade, "and is what the next visitor gets");
    assert.ok(keptPage(h, W.charMira) !== undefined, "every page read lately");
    assert.equal(keptPage(h, W.faction), undefined, "a page nobody read is made when read");

    // a page whose note the write hid is not made again: its next visit is the 404
    const hide = await h.request(`/api/lore/${W.charMira}/attributes`, {
      method: "POST",
      json: { type: "label", name: "draft", value: "" },
    });
    assert.equal(hide.status, 201);
    assert.equal(keptPage(h, W.charMira), undefined);
    assert.equal((await h.request(page(W.charMira))).status, 404);
    assert.doesNotMatch(keptPage(h, W.locHarbor) ?? "", /Mira Tallowend/);
  }, { env: { PUBLIC_CACHE_MS: "600000" } }));

Deno.test("public share: after a write at most REMADE_MAX pages are made again, the latest read", () =>
  withHarness(async (h) => {
    const world = seedGeneratedWorld(h.core.store, { notes: REMADE_MAX + 10, seed: 3 });
    const pages = world.publicIds.filter((id) => !world.imageIds.includes(id));
    assert.ok(pages.length > REMADE_MAX + 2, `${pages.length} pages`);
    for (const id of pages) await text(h, page(id));
    const put = await h.request(`/api/lore/${W.faction}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: "<p>The Guild keeps its lamps lit.</p>",
    });
    assert.equal(put.status, 204);
    const kept = pages.filter((id) => keptPage(h, id) !== undefined);
    assert.deepEqual(kept, pages.slice(-REMADE_MAX));
  }, { env: { PUBLIC_CACHE_MS: "600000" } }));

Deno.test("public share: a note hidden through the service leaves every page that linked it at once", () =>
  withHarness(async (h) => {
    const linking = await text(h, page(W.locHarbor)); // the harbor's page links Mira's
    assert.match(linking, new RegExp(`href="/public/lore/${W.charMira}"`));
    const hide = await h.request(`/api/lore/${W.charMira}/attributes`, {
      method: "POST",
      json: { type: "label", name: "draft", value: "" },
    });
    assert.equal(hide.status, 201);
    const after = await text(h, page(W.locHarbor));
    assert.doesNotMatch(after, new RegExp(W.charMira));
    assert.doesNotMatch(after, /Mira Tallowend/);
  }, { env: { PUBLIC_CACHE_MS: "600000" } }));

Deno.test("public share: a restart with the same DATA_DIR reads no note content from Core for its first page", () =>
  withHarness((h) =>
    withDataDir(async (dataDir) => {
      // the same page bytes on every port
      const start = () => startOnDataDir(h, dataDir, { PUBLIC_ORIGIN: "https://lore.example.org" });
      const first = await start();
      const seen = await (await fetch(first.url + page(W.locHarbor))).text();
      await first.stop(); // writes what the share read to DATA_DIR
      h.core.clearRequests();

      const second = await start();
      try {
        const again = await (await fetch(second.url + page(W.locHarbor))).text();
        assert.equal(again, seen);
        assert.deepEqual(contentReads(h), [], "every content came from DATA_DIR");
        // the share itself is always read from Core: what is public is Core's to say
        assert.ok(h.core.requests.some((r) => r.path === "/etapi/notes"));

        // a kept blob that no longer matches its id is never served: Core is asked again
        const blobs = join(dataDir, "public-share");
        for await (const identity of Deno.readDir(blobs)) {
          for await (const blob of Deno.readDir(join(blobs, identity.name, "blobs"))) {
            await Deno.writeTextFile(
              join(blobs, identity.name, "blobs", blob.name),
              "<p>Tampered</p>",
            );
          }
        }
      } finally {
        await second.stop();
      }
      h.core.clearRequests();
      const third = await start();
      try {
        const res = await fetch(third.url + page(W.locHarbor));
        const body = await res.text();
        assert.doesNotMatch(body, /Tampered/);
        assert.equal(body, seen);
        assert.ok(contentReads(h).includes(W.locHarbor), "the harbor's content came from Core");
      } finally {
        await third.stop();
      }
    })
  ));

Deno.test("public share: the share is read whole past MAX_UPSTREAM_BODY_BYTES, up to PUBLIC_SHARE_MAX_BYTES", async () => {
  // the sample world's subtree answer is far above 4 KiB: only the share's own bound applies
  await withHarness(async (h) => {
    assert.match(await text(h, page(W.locHarbor)), /Saltmarrow Harbor/);
    const big = await h.request(`/api/lore/${W.charMira}`);
    assert.equal(big.status, 502, "private reads keep MAX_UPSTREAM_BODY_BYTES");
    await big.body?.cancel();
  }, { env: { MAX_UPSTREAM_BODY_BYTES: "1024" } });
  // a world whose subtree answer passes PUBLIC_SHARE_MAX_BYTES: the public side says so, in JSON
  await withHarness(async (h) => {
    seedGeneratedWorld(h.core.store, { notes: 400 });
    const res = await h.request(`/api/public/lore/${W.locHarbor}`);
    assert.equal(res.status, 502);
    const body = await res.json();
    assert.equal(body.error, "UPSTREAM_ERROR");
    assert.equal(body.message, "Core sent an oversized response");
  }, { env: { PUBLIC_SHARE_MAX_BYTES: String(1024 * 1024) } });
});

Deno.test("public share: a background reload serves the last good share until the new one is in, and reads only what changed", () => {
  const clock = { now: 1_000_000 };
  return withHarness(async (h) => {
    const subtrees = () =>
      h.core.requests.filter((r) =>
        r.path === "/etapi/notes" &&
        new URLSearchParams(r.search).get("search") === "note.noteId != ''"
      ).length;
    const was = mentionedIn(await text(h, page(W.locHarbor)));
    // unchanged in Core: the reload finds the same share and nothing is read or made again
    h.core.clearRequests();
    clock.now += 1_600; // past half of PUBLIC_CACHE_MS: the next visit reloads in the background
    assert.deepEqual(mentionedIn(await text(h, page(W.locHarbor))), was);
    // the reload is in once the share is no longer due for one (the clock stands still)
    const identity = await credentialIdentity({ baseUrl: h.core.url, token: h.core.token });
    const snapshots = h.server.app.state.publicShare.snapshots;
    await eventually("the reload is in", () => snapshots.settled(identity) !== undefined);
    assert.equal(subtrees(), 1);
    assert.deepEqual(contentReads(h), []);

    // changed in Core directly: the Guild now links the harbor
    h.core.store.setNoteContent(
      W.faction,
      `<p>The Guild keeps a lamp in <a href="#root/${W.locHarbor}">the harbor</a>.</p>`,
      { scanLinks: true },
    );
    h.core.clearRequests();
    clock.now += 1_600;
    // meanwhile visitors get the last good share, and the new one is warmed before it is served
    let shown: string[] = was;
    await eventually("the changed share is served", async () => {
      shown = mentionedIn(await text(h, page(W.locHarbor)));
      return shown.includes("The Lantern Guild");
    });
    assert.deepEqual(shown.sort(), [...was, "The Lantern Guild"].sort());
    // one reload read the share and the one changed note, whichever visitor came when
    assert.equal(subtrees(), 1);
    assert.deepEqual(contentReads(h), [W.faction]);

    // changed again, and a visit to another page starts the reload: the harbor's page, read
    // lately, is made from the new share before that share is served
    h.core.store.setNoteContent(W.faction, "<p>The Guild keeps its own lamps.</p>", {
      scanLinks: true,
    });
    const served = snapshots.settled(identity);
    clock.now += 1_600;
    await text(h, "/");
    await eventually("the reload is in", () => {
      const now = snapshots.settled(identity);
      return now !== undefined && now !== served;
    });
    const remade = keptPage(h, W.locHarbor);
    assert.ok(remade !== undefined, "kept before anyone asked");
    assert.deepEqual(mentionedIn(remade).sort(), [...was].sort());
  }, { env: { PUBLIC_CACHE_MS: "3000" }, now: () => clock.now });
});

Deno.test("public site: in a world of hundreds of notes pages stay small and every note is still reachable", () =>
  withHarness(async (h) => {
    const world = seedGeneratedWorld(h.core.store, { notes: 450 });
    const pages = new Set(world.publicIds.filter((id) => !world.imageIds.includes(id)));
    // a visitor following links from the home page, as a crawler would
    const seen = new Set<string>();
    const queue = ["/"];
    let largest = 0;
    while (queue.length) {
      const html = await text(h, queue.shift()!);
      largest = Math.max(largest, html.length);
      for (const m of html.matchAll(/href="(\/public\/(?:lore|types)\/[^"#?]+)"/g)) {
        if (!seen.has(m[1])) seen.add(m[1]), queue.push(m[1]);
      }
    }
    const reached = [...seen].flatMap((p) =>
      p.startsWith("/public/lore/") ? [decodeURIComponent(p.slice("/public/lore/".length))] : []
    );
    assert.deepEqual([...pages].filter((id) => !reached.includes(id)), []);
    assert.ok(largest < 64 * 1024, `the largest page is ${largest} characters`);
  }));

Deno.test("public share: at shutdown DATA_DIR keeps only the contents the current share holds", () =>
  withHarness((h) =>
    withDataDir(async (dataDir) => {
      const kept = async () => {
        const out: string[] = [];
        for await (const identity of Deno.readDir(join(dataDir, "public-share"))) {
          for await (
            const blob of Deno.readDir(join(dataDir, "public-share", identity.name, "blobs"))
          ) {
            out.push(blob.name);
          }
        }
        return out;
      };
      const before = h.core.store.getNote(W.locHarbor)!.blobId;
      const server = await startOnDataDir(h, dataDir);
      try {
        await (await fetch(server.url + page(W.locHarbor))).text();
        const put = await fetch(`${server.url}/api/lore/${W.locHarbor}/content`, {
          method: "PUT",
          headers: { "content-type": "text/plain" },
          body: "<p>The harbor was rebuilt in stone.</p>",
        });
        assert.equal(put.status, 204);
        assert.match(
          await (await fetch(server.url + page(W.locHarbor))).text(),
          /rebuilt in stone/,
        );
        assert.ok((await kept()).includes(before), "the old content was kept while running");
      } finally {
        await server.stop();
      }
      const blobs = await kept();
      assert.ok(!blobs.includes(before), "the past version's content is gone");
      assert.ok(
        blobs.includes(h.core.store.getNote(W.locHarbor)!.blobId),
        "the current one stays",
      );
    })
  ));
