/** Attribute routes over HTTP through the real app against the Core double. */
import assert from "node:assert/strict";
import { type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";

interface Attr {
  attributeId: string;
  noteId: string;
  type: string;
  name: string;
  value: string;
  isInheritable: boolean;
  position: number;
}
interface ErrorBody {
  error: string;
  message: string;
  details?: { fields?: { path: string; message: string }[] };
}

/** A note created straight in the double's store (setup, not under test). */
function note(h: Harness, title: string, parentNoteId = "root"): string {
  return h.core.store.createNote({ parentNoteId, title, type: "text", content: "" }).note.noteId;
}

const post = (h: Harness, id: string, json: unknown) =>
  h.requestJson<Attr & ErrorBody>(`/api/lore/${id}/attributes`, { method: "POST", json });

const del = async (h: Harness, id: string, query: string) => {
  const res = await h.request(`/api/lore/${id}/attributes${query}`, { method: "DELETE" });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) as ErrorBody : null };
};

Deno.test("POST attributes: a label (with or without #), value default, flags passed on", () =>
  withHarness(async (h) => {
    const id = note(h, "Sera Quill");
    h.core.clearRequests();
    const r = await post(h, id, { type: "label", name: "#race", value: "half-elf" });
    assert.equal(r.status, 201);
    assert.equal(r.body.noteId, id);
    assert.equal(r.body.type, "label");
    assert.equal(r.body.name, "race");
    assert.equal(r.body.value, "half-elf");
    assert.deepEqual(upstreamCalls(h), ["POST /etapi/attributes"]);
    assert.equal(h.core.store.getAttribute(r.body.attributeId)?.value, "half-elf");

    const bare = await post(h, id, {
      type: "label",
      name: "hero",
      isInheritable: true,
      position: 5,
    });
    assert.equal(bare.status, 201);
    assert.deepEqual(
      [bare.body.name, bare.body.value, bare.body.isInheritable, bare.body.position],
      ["hero", "", true, 5],
    );
    const limit = await post(h, id, { type: "label", name: "bio", value: "x".repeat(10_000) });
    assert.equal(limit.status, 201);
    assert.equal(limit.body.value.length, 10_000);
  }));

Deno.test("POST attributes: a relation (with or without ~) to an existing note", () =>
  withHarness(async (h) => {
    const a = note(h, "Sera Quill");
    const b = note(h, "Brannoc");
    const r = await post(h, a, { type: "relation", name: "~relAlly", value: b });
    assert.equal(r.status, 201);
    assert.deepEqual([r.body.type, r.body.name, r.body.value], ["relation", "relAlly", b]);
    const plain = await post(h, a, { type: "relation", name: "relEnemy", value: b });
    assert.equal(plain.status, 201);
    assert.deepEqual(
      h.core.store.targetRelationsOf(b).map((x) => `${x.noteId}:${x.name}`).sort(),
      [`${a}:relAlly`, `${a}:relEnemy`],
    );
  }));

Deno.test("POST attributes: missing note → 404, missing relation target → 400 naming value", () =>
  withHarness(async (h) => {
    const a = note(h, "Sera Quill");
    const before = h.core.store.ownAttributes(a).length;

    // Core: 400 PROPERTY_VALIDATION_ERROR for the owner → our 404
    const noOwner = await post(h, "noSuchNote01", { type: "label", name: "x" });
    assert.equal(noOwner.status, 404);
    assert.deepEqual([noOwner.body.error, noOwner.body.message], ["NOT_FOUND", "Note not found"]);
    const noOwnerRel = await post(h, "noSuchNote01", { type: "relation", name: "r", value: a });
    assert.equal(noOwnerRel.status, 404);

    // Core: 404 NOTE_NOT_FOUND for the target → our 400 on body.value
    h.core.clearRequests();
    const noTarget = await post(h, a, { type: "relation", name: "relAlly", value: "noSuchNote02" });
    assert.equal(noTarget.status, 400);
    assert.equal(noTarget.body.error, "INVALID_REQUEST");
    assert.deepEqual(noTarget.body.details?.fields, [{ path: "body.value", message: "not found" }]);
    assert.deepEqual(upstreamCalls(h), ["POST /etapi/attributes", `GET /etapi/notes/${a}`]);

    // both missing: Core checks the target first (404); the owner is what the URL names → 404
    const both = await post(h, "noSuchNote01", {
      type: "relation",
      name: "r",
      value: "noSuchNote02",
    });
    assert.equal(both.status, 404);
    assert.equal(both.body.message, "Note not found");
    assert.equal(h.core.store.ownAttributes(a).length, before, "nothing was created");
  }));

Deno.test("POST attributes: bad bodies, names Core would rewrite and bad ids are 400, nothing sent", () =>
  withHarness(async (h) => {
    const a = note(h, "Sera Quill");
    h.core.clearRequests();
    const bodies: unknown[] = [
      {},
      { type: "label" },
      { type: "flag", name: "x" },
      { type: "label", name: "" },
      { type: "label", name: "#" },
      { type: "label", name: "lore-type" },
      { type: "label", name: "bad name" },
      { type: "label", name: "~rel" },
      { type: "label", name: "##x" },
      { type: "label", name: "x", value: "y".repeat(10_001) },
      { type: "label", name: "x", value: 3 },
      { type: "label", name: "x", isInheritable: "yes" },
      { type: "label", name: "x", position: -1 },
      { type: "label", name: "x", position: 1.5 },
      { type: "label", name: "x", noteId: "other1234567" },
      { type: "relation", name: "#rel", value: a },
      { type: "relation", name: "rel" },
      { type: "relation", name: "rel", value: "" },
      { type: "relation", name: "rel", value: "../notes/x" },
      { type: "relation", name: "rel", value: "a/b" },
      { type: "relation", name: "rel", value: 'x" or "y' },
    ];
    for (const body of bodies) {
      const r = await post(h, a, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error, "INVALID_REQUEST");
      assert.ok(r.body.details?.fields?.length, JSON.stringify(body));
    }
    for (const id of ["a%2Fb", "..%2Fetapi", "x'y", "_share", "_hidden", "root"]) {
      const r = await post(h, id, { type: "label", name: "x" });
      assert.equal(r.status, 400, id);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("DELETE attributes: own attribute → 204; absent → 204 (idempotent)", () =>
  withHarness(async (h) => {
    const a = note(h, "Sera Quill");
    const attr = h.core.store.createAttribute({
      noteId: a,
      type: "label",
      name: "race",
      value: "",
    });
    h.core.clearRequests();
    const r = await del(h, a, `?attrId=${attr.attributeId}`);
    assert.deepEqual(r, { status: 204, body: null });
    assert.equal(h.core.store.getAttribute(attr.attributeId), undefined);
    assert.deepEqual(upstreamCalls(h), [
      `GET /etapi/attributes/${attr.attributeId}`,
      `DELETE /etapi/attributes/${attr.attributeId}`,
    ]);
    h.core.clearRequests();
    const again = await del(h, a, `?attrId=${attr.attributeId}`);
    assert.equal(again.status, 204);
    assert.deepEqual(upstreamCalls(h), [`GET /etapi/attributes/${attr.attributeId}`]);
  }));

Deno.test("DELETE attributes: another note's attribute (inherited included) → 404, kept", () =>
  withHarness(async (h) => {
    const parent = note(h, "Harbor District");
    const child = note(h, "Gull's Rest", parent);
    const other = note(h, "Elsewhere");
    const inherited = h.core.store.createAttribute({
      noteId: parent,
      type: "label",
      name: "region",
      value: "coast",
      isInheritable: true,
    });
    const foreign = h.core.store.createAttribute({ noteId: other, type: "label", name: "x" });
    assert.ok(
      h.core.store.attributesOf(child).some((x) => x.attributeId === inherited.attributeId),
      "the child shows the parent's label",
    );
    for (const attr of [inherited, foreign]) {
      h.core.clearRequests();
      const r = await del(h, child, `?attrId=${attr.attributeId}`);
      assert.equal(r.status, 404);
      assert.deepEqual([r.body?.error, r.body?.message], ["NOT_FOUND", "Attribute not found"]);
      assert.ok(h.core.store.getAttribute(attr.attributeId), "still there");
      assert.deepEqual(upstreamCalls(h), [`GET /etapi/attributes/${attr.attributeId}`]);
    }
  }));

Deno.test("DELETE attributes: attrId injection forms are 400 and nothing reaches Core", () =>
  withHarness(async (h) => {
    const a = note(h, "Sera Quill");
    h.core.clearRequests();
    for (
      const q of [
        "",
        "?attrId=",
        "?attrId=../notes/X",
        "?attrId=..%2Fnotes%2FX",
        "?attrId=a/b",
        "?attrId=a%2Fb",
        "?attrId=%2F",
        "?attrId=%2e%2e",
        "?attrId=x%3Fy",
        "?attrId=x%23y",
        `?attrId=${"a".repeat(129)}`,
      ]
    ) {
      const r = await del(h, a, q);
      assert.equal(r.status, 400, q);
      assert.equal(r.body?.error, "INVALID_REQUEST", q);
    }
    const sys = await del(h, "_share", "?attrId=abc123");
    assert.equal(sys.status, 400);
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("DELETE attributes: Core's built-in attribute ids (with ':') are ids, not bad input", () =>
  withHarness(async (h) => {
    // hidden_subtree.ts gives the templates' attributes ids like `_template_character_llabel:race`;
    // a note using the template shows them inherited, so a client may well send one
    const a = note(h, "Sera Quill");
    h.core.store.createAttribute({
      noteId: a,
      type: "relation",
      name: "template",
      value: "_template_character",
    });
    const id = "_template_character_llabel:race";
    assert.ok(h.core.store.attributesOf(a).some((x) => x.attributeId === id));
    for (const query of [`?attrId=${id}`, `?attrId=${encodeURIComponent(id)}`]) {
      h.core.clearRequests();
      const r = await del(h, a, query);
      assert.equal(r.status, 404, query);
      assert.deepEqual([r.body?.error, r.body?.message], ["NOT_FOUND", "Attribute not found"]);
      assert.deepEqual(upstreamCalls(h), [`GET /etapi/attributes/${encodeURIComponent(id)}`]);
    }
    assert.ok(h.core.store.getAttribute(id), "the template keeps its definition");
    h.core.clearRequests();
    for (const q of ["?attrId=a:b%2Fc", "?attrId=a:..", "?attrId=a%20b", "?attrId=a%25b"]) {
      assert.equal((await del(h, a, q)).status, 400, q);
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("POST attributes: ~template keeps the note's type and mime (Core would change them)", () =>
  withHarness(async (h) => {
    // Core turns an empty code note given ~template=_template_spell into a text note
    const s = h.core.store;
    const spell = s.createNote({
      parentNoteId: "root",
      title: "Fireball",
      type: "code",
      mime: "application/javascript",
      content: "",
    }).note.noteId;
    h.core.clearRequests();
    const r = await post(h, spell, {
      type: "relation",
      name: "~template",
      value: "_template_spell",
    });
    assert.equal(r.status, 201);
    assert.deepEqual([r.body.noteId, r.body.name, r.body.value], [
      spell,
      "template",
      "_template_spell",
    ]);
    const now = await h.requestJson<{ type: string; mime: string }>(`/api/lore/${spell}`);
    assert.deepEqual([now.body.type, now.body.mime], ["code", "application/javascript"]);
    assert.deepEqual(upstreamCalls(h), [
      `GET /etapi/notes/${spell}`,
      "POST /etapi/attributes",
      `GET /etapi/notes/${spell}`,
      `PATCH /etapi/notes/${spell}`,
      `GET /etapi/notes/${spell}`,
    ]);

    // a note with content is left alone by Core: no PATCH
    const written = s.createNote({
      parentNoteId: "root",
      title: "Frost Lance",
      type: "code",
      mime: "application/javascript",
      content: "cast();",
    }).note.noteId;
    h.core.clearRequests();
    assert.equal(
      (await post(h, written, { type: "relation", name: "template", value: "_template_spell" }))
        .status,
      201,
    );
    assert.ok(!upstreamCalls(h).some((c) => c.startsWith("PATCH")));

    // a missing template is a 400 on value; nothing is left on the note
    const before = s.ownAttributes(written).length;
    const gone = await post(h, written, {
      type: "relation",
      name: "template",
      value: "noTemplate01",
    });
    assert.equal(gone.status, 400);
    assert.deepEqual(gone.body.details?.fields, [{ path: "body.value", message: "not found" }]);
    assert.equal(s.ownAttributes(written).length, before);
    assert.equal(
      (await post(h, "noSuchNote01", {
        type: "relation",
        name: "template",
        value: "_template_spell",
      })).status,
      404,
    );
  }));

Deno.test("POST attributes: ~template whose type cannot be put back is a PARTIAL_FAILURE", () =>
  withHarness(async (h) => {
    const s = h.core.store;
    const spell = s.createNote({
      parentNoteId: "root",
      title: "Fireball",
      type: "code",
      mime: "application/javascript",
      content: "",
    }).note.noteId;
    h.core.fault({ method: "PATCH", path: `/etapi/notes/${spell}`, status: 500 });
    const r = await post(h, spell, {
      type: "relation",
      name: "template",
      value: "_template_spell",
    });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "PARTIAL_FAILURE");
    assert.deepEqual(r.body.details, {
      failedStep: "keep the note's type and mime",
      cause: "UPSTREAM_ERROR",
      completed: ["link the template"],
      rolledBack: [],
      leftBehind: ["link the template"],
    });
    // exactly as reported: the relation and Core's change of type are both still there
    assert.ok(s.ownAttributes(spell).some((a) => a.name === "template"));
    assert.equal(s.getNote(spell)!.type, "text");
  }));
