import assert from "node:assert/strict";
import { ApiError } from "../http/errors.ts";
import { type CoreClient, createCoreClient } from "../upstream/core.ts";
import { type CoreSim, startCoreSim } from "../../sims/core.ts";
import { W } from "../../sims/world.ts";
import { applyProposal, isImmutableLabel, type Proposal, proposalSchema } from "./copilot_apply.ts";

/** The Core double with the sample world: Mira links to Oskar, the harbor and the guild. */
async function withCore(fn: (sim: CoreSim, core: CoreClient) => Promise<void>) {
  const sim = await startCoreSim();
  try {
    await fn(
      sim,
      createCoreClient({ baseUrl: sim.url, token: sim.token }, {
        fetch,
        timeoutMs: 2000,
      }),
    );
  } finally {
    await sim.close();
  }
}

const proposal = (targets: Record<string, unknown>[]): Proposal =>
  proposalSchema.parse({ targets });

const apply = (
  core: CoreClient,
  targets: Record<string, unknown>[],
  noteId: string = W.charMira,
) =>
  applyProposal(core, {
    noteId,
    proposal: proposal(targets),
    concurrency: 4,
    loreRootId: () => Promise.resolve(W.loreRoot),
  });

const own = (sim: CoreSim, id: string) =>
  sim.store.ownAttributes(id).map((a) => `${a.type === "label" ? "#" : "~"}${a.name}=${a.value}`);

Deno.test("isImmutableLabel: what decides kind and visibility, in any case", () => {
  for (const n of ["lore", "loreType", "template", "draft", "gmOnly", "GMONLY", "shareAlias"]) {
    assert.ok(isImmutableLabel(n), n);
  }
  for (const n of ["questStatus", "mood", "relationNote", "loreTypeNote"]) {
    assert.ok(!isImmutableLabel(n), n);
  }
});

Deno.test("apply: an update writes title, sanitized content, labels and relations", () =>
  withCore(async (sim, core) => {
    const report = await apply(core, [{
      kind: "update",
      targetId: W.charMira,
      title: "Mira the Pilot",
      contentHtml: '<p onclick="x()">Pilot<script>alert(1)</script></p>',
      labelUpserts: [
        { name: "themeSong", value: "https://music.example.org/new" },
        { name: "mood", value: "wary" },
      ],
      relationAdds: [{
        relationshipType: "member_of",
        targetId: W.faction,
        targetKind: "existing",
        description: "Owes them a debt",
        bidirectional: true,
      }],
      relationDeletes: [{ relationshipType: "ally", targetId: W.charOskar }],
    }]);
    assert.deepEqual(report, {
      updatedNoteIds: [W.charMira, W.faction],
      createdNoteIds: [],
      created: [],
      skipped: [],
      failed: [],
    });
    assert.equal(sim.store.getNote(W.charMira)!.title, "Mira the Pilot");
    assert.equal(sim.store.getContent(W.charMira), "<p>Pilot</p>");
    const attrs = own(sim, W.charMira);
    assert.deepEqual(attrs.filter((a) => a.startsWith("#themeSong")), [
      "#themeSong=https://music.example.org/new",
    ]);
    assert.ok(attrs.includes("#mood=wary"));
    assert.ok(attrs.includes(`~relMemberOf=${W.faction}`));
    assert.ok(attrs.includes(`#relationNote=member_of:${W.faction}: Owes them a debt`));
    assert.ok(!attrs.includes(`~relAlly=${W.charOskar}`));
    assert.ok(own(sim, W.faction).includes(`~relMemberOf=${W.charMira}`), "inverse relation");
  }));

Deno.test("apply: creates first in dependency order; relations to new notes resolve", () =>
  withCore(async (sim, core) => {
    const report = await apply(core, [
      {
        kind: "update",
        targetId: W.charOskar,
        relationAdds: [{ relationshipType: "enemy", targetId: "witch", targetKind: "new" }],
      },
      {
        kind: "create",
        targetId: "coven",
        title: "The Salt Coven",
        loreType: "organization",
        contentHtml: "<p>Witches.</p>",
        relationAdds: [
          { relationshipType: "related_to", targetId: W.charMira, targetKind: "existing" },
          { relationshipType: "leader_of", targetId: "witch", targetKind: "new" },
        ],
      },
      {
        kind: "create",
        targetId: "witch",
        title: "The Salt Witch",
        loreType: "deity",
        contentHtml: "<p>She<img src=x onerror=alert(1)> waits.</p>",
        labelUpserts: [{ name: "domain", value: "salt" }],
        relationAdds: [{
          relationshipType: "related_to",
          targetId: W.charMira,
          targetKind: "existing",
          bidirectional: true,
        }],
      },
    ]);
    assert.deepEqual(report.skipped, []);
    assert.deepEqual(report.failed, []);
    assert.deepEqual(report.created.map((c) => c.targetId), ["witch", "coven"]);
    const [witch, coven] = report.createdNoteIds;
    assert.deepEqual(report.updatedNoteIds, [W.charMira, W.charOskar]);
    const w = sim.store.getNote(witch)!;
    assert.equal(w.title, "The Salt Witch");
    assert.deepEqual(sim.store.branchesOf(witch).map((b) => b.parentNoteId), [W.loreRoot]);
    assert.equal(sim.store.getContent(witch), "<p>She waits.</p>");
    assert.deepEqual(own(sim, witch).sort(), [
      "#domain=salt",
      "#lore=",
      "#loreType=deity",
      `~relRelatedTo=${W.charMira}`,
      "~template=_template_deity",
    ]);
    assert.ok(own(sim, W.charMira).includes(`~relRelatedTo=${witch}`));
    assert.ok(own(sim, coven).includes(`~relLeaderOf=${witch}`));
    assert.ok(own(sim, W.charOskar).includes(`~relEnemy=${witch}`));
  }));

Deno.test("apply: scope and immutable labels refuse a target whole; dependents are skipped", () =>
  withCore(async (sim, core) => {
    const before = own(sim, W.charMira);
    const report = await apply(core, [
      { kind: "update", targetId: W.charIselde, title: "Not linked from Mira" },
      { kind: "update", targetId: W.charMira, labelUpserts: [{ name: "gmOnly", value: "" }] },
      { kind: "update", targetId: W.charMira, labelDeletes: ["shareAlias"] },
      { kind: "update", targetId: W.charMira, labelUpserts: [{ name: "bad-name", value: "" }] },
      { kind: "update", targetId: W.charMira, loreType: "location" },
      {
        kind: "update",
        targetId: W.charOskar,
        relationAdds: [{
          relationshipType: "ally",
          targetId: W.charBrannoch,
          targetKind: "existing",
        }],
      },
      {
        kind: "update",
        targetId: W.charOskar,
        relationAdds: [{ relationshipType: "ally", targetId: "ghost", targetKind: "new" }],
      },
      { kind: "create", targetId: "bare", title: "Bare", loreType: "item" },
      {
        kind: "create",
        targetId: "unlinked",
        title: "Unlinked",
        loreType: "item",
        contentHtml: "",
        relationAdds: [{ relationshipType: "owns", targetId: W.charOskar, targetKind: "existing" }],
      },
      {
        kind: "create",
        targetId: "locked",
        title: "Locked",
        loreType: "item",
        contentHtml: "",
        labelUpserts: [{ name: "Draft", value: "" }],
        relationAdds: [{
          relationshipType: "owns",
          targetId: W.charMira,
          targetKind: "existing",
        }],
      },
      {
        kind: "update",
        targetId: W.charMira,
        relationAdds: [{ relationshipType: "owns", targetId: "locked", targetKind: "new" }],
      },
      {
        kind: "create",
        targetId: "a",
        title: "A",
        loreType: "item",
        contentHtml: "",
        relationAdds: [
          { relationshipType: "owns", targetId: W.charMira, targetKind: "existing" },
          { relationshipType: "related_to", targetId: "b", targetKind: "new" },
        ],
      },
      {
        kind: "create",
        targetId: "b",
        title: "B",
        loreType: "item",
        contentHtml: "",
        relationAdds: [
          { relationshipType: "owns", targetId: W.charMira, targetKind: "existing" },
          { relationshipType: "related_to", targetId: "a", targetKind: "new" },
        ],
      },
    ]);
    assert.deepEqual(report.updatedNoteIds, []);
    assert.deepEqual(report.createdNoteIds, []);
    assert.deepEqual(report.failed, []);
    assert.deepEqual(report.skipped, [
      {
        targetId: W.charIselde,
        reason: "not writable from this note (only the note itself and the lore notes it " +
          "links to)",
      },
      { targetId: W.charMira, reason: "#gmOnly cannot be changed by the copilot" },
      { targetId: W.charMira, reason: "#shareAlias cannot be changed by the copilot" },
      { targetId: W.charMira, reason: "#bad-name is not a valid label name" },
      { targetId: W.charMira, reason: "the lore type cannot be changed" },
      {
        targetId: W.charOskar,
        reason: `relation target "${W.charBrannoch}" is not writable from this note`,
      },
      {
        targetId: W.charOskar,
        reason: 'relation target "ghost" is not a new note of this proposal',
      },
      { targetId: "bare", reason: "a new note needs loreType, title and contentHtml" },
      { targetId: "unlinked", reason: "a new note must be related to this note" },
      { targetId: "locked", reason: "#Draft cannot be changed by the copilot" },
      { targetId: "a", reason: "depends on new notes that depend on it in turn" },
      { targetId: "b", reason: "depends on new notes that depend on it in turn" },
      { targetId: W.charMira, reason: 'depends on "locked", which was not created' },
    ]);
    assert.deepEqual(own(sim, W.charMira), before, "nothing was written");
  }));

Deno.test("apply: a failing step rolls its target back; other targets still land", () =>
  withCore(async (sim, core) => {
    sim.fault({ method: "PUT", path: `/etapi/notes/${W.charOskar}/content`, status: 500 });
    const oskarBefore = sim.store.getContent(W.charOskar);
    const report = await apply(core, [
      { kind: "update", targetId: W.charOskar, title: "Oskar the Liar", contentHtml: "<p>x</p>" },
      { kind: "update", targetId: W.locHarbor, labelUpserts: [{ name: "tide", value: "high" }] },
    ]);
    assert.deepEqual(report.updatedNoteIds, [W.locHarbor]);
    assert.equal(report.failed.length, 1);
    const f = report.failed[0];
    assert.equal(f.targetId, W.charOskar);
    assert.equal(f.error, "UPSTREAM_ERROR");
    assert.match(f.message, /while trying to replace the content; nothing was changed/);
    assert.deepEqual(f.details, {
      service: "core",
      upstreamCode: "GENERIC",
      failedStep: "replace the content",
      rolledBack: ["rename the note"],
    });
    assert.equal(sim.store.getNote(W.charOskar)!.title, "Oskar Venn");
    assert.equal(sim.store.getContent(W.charOskar), oskarBefore);
    assert.ok(own(sim, W.locHarbor).includes("#tide=high"));
  }));

Deno.test("apply: an undo that fails too is reported as PARTIAL_FAILURE with what was left", () =>
  withCore(async (sim, core) => {
    let patches = 0;
    const flaky: CoreClient = {
      ...core,
      patchNote: (id, patch) =>
        ++patches === 2
          ? Promise.reject(new ApiError(502, "UPSTREAM_ERROR", "Core failed"))
          : core.patchNote(id, patch),
      putContent: () => Promise.reject(new ApiError(502, "UPSTREAM_ERROR", "Core failed")),
    };
    const report = await apply(flaky, [{
      kind: "update",
      targetId: W.charOskar,
      title: "Oskar the Liar",
      contentHtml: "<p>x</p>",
    }]);
    assert.equal(report.failed[0].error, "PARTIAL_FAILURE");
    assert.deepEqual(report.failed[0].details, {
      failedStep: "replace the content",
      cause: "UPSTREAM_ERROR",
      completed: ["rename the note"],
      rolledBack: [],
      leftBehind: ["rename the note"],
    });
    assert.equal(sim.store.getNote(W.charOskar)!.title, "Oskar the Liar", "exactly as reported");
  }));

Deno.test("apply: a note that cannot be loaded fails the whole request, nothing written", () =>
  withCore(async (sim, core) => {
    const err = await apply(
      core,
      [{ kind: "update", targetId: "nope", title: "x" }],
      "missingNote1",
    )
      .catch((e) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 404);
    assert.ok(sim.requests.every((r) => r.method === "GET"));
  }));

Deno.test("apply: a create whose content sanitizes to nothing stays a text note", () =>
  withCore(async (sim, core) => {
    // Core turns an empty note given ~template=_template_timeline (a book) into a book
    const report = await apply(core, [{
      kind: "create",
      targetId: "era",
      title: "The Drowned Era",
      loreType: "timeline",
      contentHtml: "<script>alert(1)</script>",
      relationAdds: [{
        relationshipType: "related_to",
        targetId: W.charMira,
        targetKind: "existing",
      }],
    }]);
    assert.deepEqual(report.failed, []);
    const era = sim.store.getNote(report.createdNoteIds[0])!;
    assert.deepEqual([era.type, era.mime], ["text", "text/html"]);
    assert.ok(own(sim, era.noteId).includes("~template=_template_timeline"));
  }));
