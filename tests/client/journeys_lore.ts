/// <reference lib="dom" />
/**
 * The lore journeys of `deno task test:client`: create an entry from a template, write its content
 * (and find it in Core), set its labels, make it GM-only and back, apply a suggested relation, give
 * it a portrait (picked and uploaded), and read a sample character as the GM and as a player.
 * Each ends by asking the Core double what arrived, where the UI could claim success without it.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { Locator } from "playwright-core";
import { W } from "../../sims/world.ts";
import { check, CheckFailed, TEST_PNG } from "../conformance/kit.ts";
import {
  type ClientState,
  type ClientStep,
  coreContent,
  eventually,
  EXPECT_TIMEOUT_MS,
  hidden,
  noteOf,
  open,
  shown,
} from "./client_kit.ts";
import * as P from "./pages.ts";

/** The template the run creates its entry from, and a field of it it fills. */
const TEMPLATE = { label: "Character", loreType: "character", field: "Race", value: "Half-elf" };

/** Waits until the page is at `/lore/<id>` (the entry itself, after a save or a creation). */
async function atEntry(s: ClientState, what: string, id?: string): Promise<string> {
  const want = id ? new RegExp(`/lore/${id}$`) : /\/lore\/(?!new$)[^/]+$/;
  try {
    await s.page.waitForURL(want, { timeout: EXPECT_TIMEOUT_MS });
  } catch {
    throw new CheckFailed(
      `${what} did not open the entry (still at ${new URL(s.page.url()).pathname})`,
    );
  }
  await s.monitor.settle();
  return new URL(s.page.url()).pathname.split("/")[2];
}

/** Waits until an image shows a picture (loaded, with a size). */
async function pictured(img: Locator, what: string): Promise<void> {
  await shown(img, what);
  await eventually(
    () =>
      img.first().evaluate((e) =>
        (e as HTMLImageElement).complete && (e as HTMLImageElement).naturalWidth > 0
      ),
    `${what} shows a picture`,
  );
}

const own = (s: ClientState, noteId: string) => s.core.store.ownAttributes(noteId);

/** The journeys, in the order they run (later ones use the entry the first one creates). */
export const LORE_JOURNEYS: readonly ClientStep[] = [
  {
    page: P.loreNew.route,
    journey: "create from a template",
    check: "the Character entry opens with its field, content and Core labels",
    async run(s) {
      const p = s.page;
      const title = `Tidewatcher ${s.tag}`;
      const line = `${title} keeps watch over Saltmarrow Harbor with Mira Tallowend.`;
      await open(s, "/lore/new");
      await shown(P.loreNew.ready(p), "New Lore Entry");
      await P.loreNew.title(p).fill(title);
      await P.loreNew.chooseTemplate(p).click();
      await shown(P.loreNew.templateDialog(p), "the template picker");
      await P.loreNew.template(p, TEMPLATE.label).click();
      await P.loreNew.field(p, TEMPLATE.field).fill(TEMPLATE.value);
      await P.loreNew.editor(p).click();
      await p.keyboard.type(line);
      await P.loreNew.create(p).click();
      const noteId = await atEntry(s, "Create Entry");
      s.notes.set("created", { noteId, title });
      await shown(P.loreDetail.title(p).getByText(title, { exact: true }), "the new entry's title");
      await shown(P.loreDetail.text(p, line), "the content written on creation");
      await shown(P.loreDetail.detail(p, TEMPLATE.value), `${TEMPLATE.field}: ${TEMPLATE.value}`);
      const attrs = own(s, noteId).map((a) => `${a.type}:${a.name}=${a.value}`);
      for (
        const want of [
          `label:loreType=${TEMPLATE.loreType}`,
          `relation:template=_template_${TEMPLATE.loreType}`,
        ]
      ) {
        check(attrs.includes(want), `Core's note lacks ${want} (has ${attrs.join(", ")})`);
      }
      return `created ${noteId}: ${TEMPLATE.label} template, ${TEMPLATE.field} shown, labels in Core`;
    },
  },
  {
    page: P.loreEdit.route,
    journey: "edit content and save",
    check: "the typed line reaches Core and reads back in the editor and the article",
    async run(s) {
      const p = s.page;
      const note = noteOf(s, "created");
      const line = `The tide bell rang twice for ${s.tag}.`;
      await open(s, `/lore/${note.noteId}/edit`);
      await shown(P.loreEdit.ready(p), "Edit Lore Entry");
      await shown(
        P.loreEdit.editor(p).getByText("keeps watch"),
        "the entry's content in the editor",
      );
      await P.loreEdit.editor(p).click();
      await p.keyboard.press("Control+End");
      await p.keyboard.press("Enter");
      await p.keyboard.type(line);
      await eventually(
        async () => (await coreContent(s, note.noteId)).includes(line),
        "the typed line in Core's copy of the note",
      );
      await open(s, `/lore/${note.noteId}/edit`);
      await shown(
        P.loreEdit.editor(p).getByText(line),
        "the saved line after a reload of the editor",
      );
      await open(s, `/lore/${note.noteId}`);
      await shown(P.loreDetail.text(p, line), "the saved line in the article");
    },
  },
  {
    page: P.loreEdit.route,
    journey: "labels",
    check: "changed and new template fields saved as labels and shown in the rail",
    async run(s) {
      const p = s.page;
      const note = noteOf(s, "created");
      await open(s, `/lore/${note.noteId}/edit`);
      await shown(P.loreEdit.ready(p), "Edit Lore Entry");
      const race = P.loreEdit.field(p, TEMPLATE.field);
      const was = await race.inputValue();
      check(
        was === TEMPLATE.value,
        `the ${TEMPLATE.field} field holds "${was}", not the saved "${TEMPLATE.value}"`,
      );
      await race.fill("Sea-elf");
      await P.loreEdit.field(p, "Role").fill("Harbor pilot");
      await P.loreEdit.saveMetadata(p).click();
      await atEntry(s, "Save Metadata", note.noteId);
      await shown(P.loreDetail.detail(p, "Sea-elf"), "Race: Sea-elf");
      await shown(P.loreDetail.detail(p, "Harbor pilot"), "Role: Harbor pilot");
      await hidden(P.loreDetail.detail(p, TEMPLATE.value), `the old ${TEMPLATE.field}`);
      const labels = own(s, note.noteId).filter((a) => a.type === "label");
      const value = (name: string) => labels.filter((a) => a.name === name).map((a) => a.value);
      check(
        value("Race").join() === "Sea-elf" && value("Role").join() === "Harbor pilot",
        `Core holds Race=${value("Race").join("|")}, Role=${value("Role").join("|")}`,
      );
    },
  },
  {
    page: P.loreDetail.route,
    journey: "GM-only toggle",
    check: "GM Only on (warning shown, #gmOnly in Core) and off again",
    async run(s) {
      const p = s.page;
      const note = noteOf(s, "created");
      await open(s, `/lore/${note.noteId}`);
      await shown(P.loreDetail.visibility(p, "Visible"), "the Visible badge");
      await P.loreDetail.visibility(p, "Visible").click();
      await shown(P.loreDetail.visibility(p, "GM Only"), "the GM Only badge after a click");
      await shown(P.loreDetail.gmWarning(p), "the GM-only warning");
      check(s.core.store.hasLabel(note.noteId, "gmOnly"), "Core's note has no #gmOnly");
      await P.loreDetail.visibility(p, "GM Only").click();
      await shown(P.loreDetail.visibility(p, "Visible"), "the Visible badge after a second click");
      await hidden(P.loreDetail.gmWarning(p), "the GM-only warning");
      check(!s.core.store.hasLabel(note.noteId, "gmOnly"), "Core's note keeps #gmOnly");
    },
  },
  {
    page: P.loreDetail.route,
    journey: "relations",
    check: "a suggested relation applied, shown in the rail and stored in Core",
    async run(s) {
      const p = s.page;
      const note = noteOf(s, "created");
      await open(s, `/lore/${note.noteId}`);
      await P.loreDetail.relationshipMap(p).click();
      await s.monitor.settle();
      if (await P.loreDetail.noRelations(p).isVisible()) {
        throw new CheckFailed(
          "no relation suggested for an entry naming Saltmarrow Harbor and Mira Tallowend",
        );
      }
      const apply = P.loreDetail.apply(p).first();
      await shown(apply, "an Apply button under AI Suggestions");
      const link = apply.locator("xpath=..").getByRole("link").first();
      const target = (await link.innerText()).trim();
      const targetId = (await link.getAttribute("href"))?.split("/").pop();
      await apply.click();
      await s.monitor.settle();
      await shown(P.loreDetail.related(p, target), `"${target}" under Related Entries`);
      const stored = own(s, note.noteId).some((a) => a.type === "relation" && a.value === targetId);
      check(stored, `Core's note has no relation to "${target}" (${targetId}) after Apply`);
      return `applied the relation to "${target}"`;
    },
  },
  {
    page: P.loreEdit.route,
    journey: "portrait",
    check: "a portrait picked, one uploaded under its file name, saved and shown",
    async run(s) {
      const p = s.page;
      const note = noteOf(s, "created");
      const sample = s.core.store.getNote(W.imgPortrait)?.title ?? "mira-portrait.png";
      await open(s, `/lore/${note.noteId}/edit`);
      await shown(P.loreEdit.ready(p), "Edit Lore Entry");
      await P.loreEdit.portraitSearch(p).fill(sample.slice(0, 6));
      await shown(P.loreEdit.portraitResult(p, sample), `"${sample}" in the image picker`);
      await P.loreEdit.portraitResult(p, sample).click();
      const picked = await P.loreEdit.portraitId(p).inputValue();
      check(picked === W.imgPortrait, `picking "${sample}" set the portrait to "${picked}"`);
      const file = `portrait-${s.tag}.png`;
      await P.loreEdit.portraitUpload(p).setInputFiles({
        name: file,
        mimeType: "image/png",
        buffer: Buffer.from(TEST_PNG),
      });
      await eventually(
        async () => (await P.loreEdit.portraitId(p).inputValue()) !== picked,
        "the uploaded portrait",
      );
      const uploaded = await P.loreEdit.portraitId(p).inputValue();
      const stored = s.core.store.getNote(uploaded)?.title;
      check(
        stored === file,
        `the uploaded image is titled "${stored}" in Core, not its file name "${file}"`,
      );
      await P.loreEdit.saveMetadata(p).click();
      await atEntry(s, "Save Metadata", note.noteId);
      await pictured(P.loreDetail.portrait(p, note.title), "the portrait");
      const rel = own(s, note.noteId).find((a) =>
        a.type === "relation" && a.name === "portraitImage"
      );
      check(
        rel?.value === uploaded,
        `Core's ~portraitImage points to ${rel?.value ?? "nothing"}, not ${uploaded}`,
      );
    },
  },
  {
    page: P.loreDetail.route,
    journey: "preview gm vs player with images",
    check: "GM sees the secrets, a player does not; the picture shows in both",
    async run(s) {
      const p = s.page;
      const mira = noteOf(s, "mira");
      const secrets = ["a debt she cannot pay", "Her mother still lives beneath the reef."];
      await open(s, `/lore/${mira.noteId}`);
      for (const secret of secrets) {
        await shown(P.loreDetail.text(p, secret), `GM view: "${secret}"`);
      }
      await pictured(P.loreDetail.image(p, "Mira"), "GM view: the picture in the article");
      await P.loreDetail.player(p).click();
      await shown(P.loreDetail.playerSafe(p), "Player-safe preview");
      await s.monitor.settle();
      await shown(P.loreDetail.text(p, "pilots ships"), "player view: the public text");
      for (const secret of secrets) {
        await hidden(P.loreDetail.text(p, secret), `player view: "${secret}"`);
      }
      await pictured(P.loreDetail.image(p, "Mira"), "player view: the picture in the article");
      await P.loreDetail.gm(p).click();
      await s.monitor.settle();
      await shown(P.loreDetail.text(p, secrets[0]), "GM view again: the secret");
    },
  },
];
