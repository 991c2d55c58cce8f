import assert from "node:assert/strict";
import { type NoteRef, noteRef } from "./note_refs.ts";

const id = (noteId: string, image = false): NoteRef => ({ kind: "id", id: noteId, image });
const share = (ref: string, bare = false): NoteRef => ({ kind: "share", ref, bare });
const attachment = (attId: string, image = false): NoteRef => ({
  kind: "attachment",
  id: attId,
  image,
});

function expectRefs(cases: readonly [string, NoteRef | null][]): void {
  for (const [url, expected] of cases) {
    assert.deepEqual(noteRef(url), expected, JSON.stringify(url));
  }
}

Deno.test("noteRef: Core's internal links, relative or on any absolute URL", () => {
  expectRefs([
    ["#root/a/b/AbC123", id("AbC123")],
    ["#root/AbC123", id("AbC123")],
    ["#root/a/AbC123/", id("AbC123")],
    ["#root/a/AbC123?viewMode=attachments&attachmentId=AtT1", id("AbC123")],
    ["#root", id("root")],
    ["#ROOT/AbC123", id("AbC123")],
    ["#root/a/Ab%43123", id("AbC123")],
    ["http://core.example/#root/a/b/AbC123", id("AbC123")],
    ["HTTPS://Core.Example:8443/app/#root/AbC123", id("AbC123")],
    ["/anything#root/AbC123", id("AbC123")], // fail closed: the fragment still names it
    ["#section-2", null],
    ["#AbC123", null],
    ["root/AbC123", null],
  ]);
});

Deno.test("noteRef: Core's share URLs on any host, absolute or relative", () => {
  expectRefs([
    ["http://core:8080/share/AbC123", share("AbC123")],
    ["https://lore.example.org/base/share/harbor-town", share("harbor-town")],
    ["HtTp://CORE:8080/SHARE/AbC123", share("AbC123")], // Core's routes ignore letter case
    ["//core.example/share/AbC123", share("AbC123")],
    ["/share/AbC123", share("AbC123")],
    ["/share/AbC123/", share("AbC123")],
    ["share/harbor-town", share("harbor-town")],
    ["../share/harbor-town", share("harbor-town")],
    ["../../share/AbC123?x=1#top", share("AbC123")],
    ["\\share\\AbC123", share("AbC123")], // a browser reads a backslash as a slash
    ["/share/harbor%20town", share("harbor town")],
    ["/share/caf%C3%A9", share("café")],
    ["/share/%E0%A4%A", share("%E0%A4%A")], // not valid percent-encoding: names nothing
    ["/share", share("")],
    ["/share/", share("")],
    ["http://core:8080/share/", share("")],
    ["/public/lore/harbor-town", share("harbor-town")], // our own public pages
    ["https://lore.example/public/maps/AbC123", share("AbC123")],
    ["/api/public/lore/AbC123", share("AbC123")],
  ]);
});

Deno.test("noteRef: the bare links Core's share pages write (`./<id|alias>`, `<id>`)", () => {
  expectRefs([
    ["./AbC123", share("AbC123", true)],
    ["AbC123", share("AbC123", true)],
    ["./harbor-town?x#y", share("harbor-town", true)],
    ["./harbor%2Dtown", share("harbor-town", true)],
    ["./", share("", true)], // the share root
    [".", share("", true)],
    ["../AbC123", null], // climbs out of the share
    ["a/b", null],
    ["", null],
    ["?page=2", null],
  ]);
});

Deno.test("noteRef: API-style note, image and attachment URLs", () => {
  expectRefs([
    ["api/notes/AbC123/download", id("AbC123")],
    ["/share/api/notes/AbC123", id("AbC123")],
    ["http://core:8080/share/api/notes/AbC123/view?x", id("AbC123")],
    ["/etapi/notes/AbC123/content", id("AbC123")],
    ["/ETAPI/Notes/AbC123", id("AbC123")],
    ["/api/lore/AbC123", id("AbC123")],
    ["/api/lore/AbC123/image", id("AbC123", true)],
    ["api/images/AbC123/map.png?1700000000", id("AbC123", true)],
    ["../share/api/images/AbC123/map.png", id("AbC123", true)],
    ["https://cdn.example/base/api/images/AbC123/m.png", id("AbC123", true)],
    ["api/images/../images/AbC123/m.png", id("AbC123", true)],
    ["/api/public/images/AbC123/Coast-chart.png", id("AbC123", true)],
    ["api/attachments/AtT1/image/sigil.png", attachment("AtT1", true)],
    ["api/attachments/AtT1/download", attachment("AtT1")],
    ["/share/api/attachments/AtT1/download", attachment("AtT1")],
    ["/etapi/notes", null],
    ["api/images", null],
  ]);
});

Deno.test("noteRef: whitespace and control characters as a browser treats them", () => {
  expectRefs([
    ["  /share/AbC123  ", share("AbC123")],
    ["\n./AbC123\t", share("AbC123", true)],
    ["/sh\tare/Ab\nC123", share("AbC123")], // tab and newline vanish inside a URL
    ["\u0000#root/AbC123", id("AbC123")],
  ]);
});

Deno.test("noteRef: other schemes and external pages name no note", () => {
  expectRefs([
    ["https://example.org/page", null],
    ["https://example.org/", null],
    ["mailto:gm@example.org", null],
    ["javascript:alert(1)//#root/AbC123", null],
    ["data:text/html,<a href=#root/x>", null],
    ["ftp://core.example/share/AbC123", null],
    ["tel:+123", null],
  ]);
  assert.equal(noteRef(undefined as unknown as string), null);
});
