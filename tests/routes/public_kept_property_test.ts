/**
 * Property test of what the public share keeps across snapshots (readings, player HTML,
 * summaries, the frame): after every random edit through the service — a note hidden or shown,
 * renamed, aliased, or rewritten to link others, hidden ones included — each public answer of the
 * service that kept everything from before is byte for byte the answer of a service started cold
 * on the same Core. Whatever was kept, nothing of the past shows.
 */
import assert from "node:assert/strict";
import { startOnDataDir, withDataDir } from "../helpers/data_dir.ts";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { prng, propertySeed } from "../helpers/prng.ts";
import { W } from "../../sims/world.ts";

type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)];

const ORIGIN = "https://lore.example.org"; // both services write the same absolute URLs
const STEPS = 20;

/** The notes of the sample world's share the edits play with (public and hidden ones). */
const NOTES = [
  W.guideWelcome,
  W.locHarbor,
  W.charMira,
  W.faction,
  W.locChart,
  W.guideDraft,
  W.guideGmOnly,
  W.guideWip,
];

/** The label each toggling edit adds or removes. */
const LABELS = {
  draft: "draft",
  alias: "shareAlias",
  private: "sharePrivateFields",
  noindex: "shareDisallowRobotIndexing",
} as const;

const WORDS = ["Harbor", "Mira", "lantern", "tide", "Guild", "ledger", "reef", "salt"];

/** One random edit through the service; returns what it did, for the failure message. */
async function edit(h: Harness, rng: Rng): Promise<string> {
  const kind = pick(rng, ["draft", "title", "alias", "links", "private", "noindex"] as const);
  // the share root's own labels change what every page may show of every note
  const id = kind === "private" || kind === "noindex" ? W.guide : pick(rng, NOTES);
  const send = async (path: string, init: RequestInit & { json?: unknown }) => {
    const res = await h.request(path, init);
    await res.body?.cancel();
    assert.ok(res.ok, `${init.method} ${path}: ${res.status}`);
  };
  const own = (name: string) =>
    h.core.store.ownAttributes(id).find((a) => a.type === "label" && a.name === name);
  if (kind !== "title" && kind !== "links") {
    const name = LABELS[kind];
    const had = own(name);
    if (had) {
      await send(`/api/lore/${id}/attributes?attrId=${had.attributeId}`, { method: "DELETE" });
      return `${name} off ${id}`;
    }
    const value = kind === "alias"
      ? `${pick(rng, WORDS).toLowerCase()}-${id.slice(-4)}`
      : kind === "private"
      ? "themeSong, geolocation, relAlly, relInhabits"
      : "";
    await send(`/api/lore/${id}/attributes`, {
      method: "POST",
      json: { type: "label", name, value },
    });
    return `${name}=${value} on ${id}`;
  }
  if (kind === "title") {
    const title = `${pick(rng, WORDS)} ${pick(rng, WORDS)}`;
    await send(`/api/lore/${id}`, { method: "PATCH", json: { title } });
    return `${id} titled ${title}`;
  }
  const targets = [pick(rng, NOTES), pick(rng, NOTES)];
  const body = `<p>${
    targets.map((t) =>
      `<a href="#root/${t}">${
        rng() < 0.5 ? h.core.store.getNote(t)!.title : pick(rng, WORDS)
      }</a> by the ${pick(rng, WORDS)}.`
    ).join(" ")
  }</p>`;
  await send(`/api/lore/${id}/content`, {
    method: "PUT",
    headers: { "content-type": "text/plain" },
    body,
  });
  return `${id} links ${targets.join(", ")}`;
}

/** Every public answer worth comparing: each note's API answer and page, lists, search. */
function paths(): string[] {
  return [
    "/",
    "/sitemap.xml",
    "/public/feed.atom",
    ...WORDS.map((w) => `/api/public/search?q=${w}`),
    ...WORDS.slice(0, 3).map((w) => `/?q=${w}`),
    ...[W.guide, ...NOTES].flatMap((id) => [`/api/public/lore/${id}`, `/public/lore/${id}`]),
  ];
}

async function answers(base: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const path of paths()) {
    const res = await fetch(base + path);
    // a request id is each request's own
    const text = (await res.text()).replace(
      /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f-]{4,}[0-9a-f]{12}/g,
      "id",
    );
    out.set(path, `${res.status}\n${text}`);
  }
  return out;
}

Deno.test("property: what the public share kept answers exactly as a cold start would", () =>
  withHarness(async (h) => {
    const seed = propertySeed(20261127);
    const rng = prng(seed);
    await answers(h.url); // the kept service has read everything once
    const done: string[] = [];
    for (let step = 0; step < STEPS; step++) {
      done.push(await edit(h, rng));
      const kept = await answers(h.url);
      await withDataDir(async (dataDir) => {
        const cold = await startOnDataDir(h, dataDir, { PUBLIC_ORIGIN: ORIGIN });
        try {
          const fresh = await answers(cold.url);
          for (const [path, answer] of fresh) {
            assert.equal(kept.get(path), answer, `seed ${seed}, after ${done.join("; ")}: ${path}`);
          }
        } finally {
          await cold.stop();
        }
      });
    }
  }, { env: { PUBLIC_ORIGIN: ORIGIN, PUBLIC_CACHE_MS: "600000" } }));
