/**
 * The settings journeys of `deno task test:client`: make the run's entry the share root, see it
 * shown with a public address that answers, and put the sample root back (its address and the
 * Shared page's and a published entry's links answering too); then disconnect and reconnect both
 * services the way the Settings page offers — the Parser (AllKnower) by logging in, after a wrong
 * password is refused, and Core (AllCodex) with an ETAPI token. They run last: they take the
 * services away for a moment.
 *
 * @module
 */
import type { Locator } from "playwright-core";
import { W } from "../../sims/world.ts";
import { check, CheckFailed } from "../conformance/kit.ts";
import { type ClientState, type ClientStep, hidden, noteOf, open, shown } from "./client_kit.ts";
import * as P from "./pages.ts";

/**
 * Follows a link as a browser would (redirects too) and fails unless it ends in a page; a link
 * holding Core's own address fails at once (no answer of ours may contain it).
 */
async function answers(s: ClientState, href: string | null, what: string): Promise<string> {
  if (!href) throw new CheckFailed(`${what}: no address shown`);
  if (href.includes(s.core.url)) {
    throw new CheckFailed(`${what} is Core's internal address ${href}`);
  }
  const url = new URL(href, s.portalUrl).href;
  const r = await s.page.request.get(url);
  await r.dispose();
  if (r.status() >= 400) throw new CheckFailed(`${what} ${url} answers ${r.status()}`);
  return url;
}

/** Sets the share root in the Share Configuration card and waits until it is shown. */
async function setShareRoot(s: ClientState, noteId: string, title: string): Promise<Locator> {
  const p = s.page;
  const card = P.settings.share(p);
  await P.settings.shareRootId(p).fill(noteId);
  await P.settings.button(card, "Save").click();
  await s.monitor.settle();
  await shown(P.settings.currentShareRoot(p), "Current share root");
  await shown(card.getByText(title, { exact: true }), `"${title}" as the current share root`);
  await shown(card.getByText(noteId, { exact: true }), `${noteId} as the current share root`);
  return card;
}

/** Opens Settings and the Advanced part of a service's card, which should be connected. */
async function serviceCard(s: ClientState, name: "AllKnower" | "AllCodex"): Promise<Locator> {
  await open(s, "/settings");
  await shown(P.settings.ready(s.page), "Service Connections");
  const card = P.settings.service(s.page, name);
  await shown(P.settings.status(card, "Connected"), `${name}: Connected`);
  await P.settings.advanced(card).click();
  return card;
}

/** Disconnects a service's card and checks it says so. */
async function disconnect(card: Locator, name: string): Promise<void> {
  await P.settings.disconnect(card).click();
  await shown(P.settings.status(card, "Disconnected"), `${name}: Disconnected after Disconnect`);
}

/** After a reload, the service still says the card's service is connected. */
async function stillConnected(s: ClientState, name: "AllKnower" | "AllCodex"): Promise<void> {
  await open(s, "/settings");
  await shown(
    P.settings.status(P.settings.service(s.page, name), "Connected"),
    `${name}: Connected after a reload`,
  );
}

/** The journeys, in the order they run. */
export const SETTINGS_JOURNEYS: readonly ClientStep[] = [
  {
    page: P.settings.route,
    journey: "set the share root and see it shown",
    check: "the root shown with a public address, the sample root back, share links answering",
    async run(s) {
      const p = s.page;
      const note = noteOf(s, "created");
      const guide = { noteId: W.guide, title: s.core.store.getNote(W.guide)?.title ?? W.guide };
      await open(s, "/settings");
      await shown(P.settings.ready(p), "Service Connections");
      const card = await setShareRoot(s, note.noteId, note.title);
      const site = await answers(
        s,
        await card.getByRole("link").first().getAttribute("href"),
        "the share root's address",
      );
      await open(s, "/settings");
      await shown(
        P.settings.share(p).getByText(note.title, { exact: true }),
        "the share root after a reload",
      );
      await setShareRoot(s, guide.noteId, guide.title);
      await hidden(
        P.settings.share(p).getByText(note.title, { exact: true }),
        "the previous share root",
      );
      await open(s, "/shared");
      await shown(P.shared.viewSite(p), "View Share Site");
      await answers(s, await P.shared.viewSite(p).getAttribute("href"), "View Share Site");
      const mira = noteOf(s, "mira");
      await open(s, `/lore/${mira.noteId}`);
      await shown(P.loreDetail.shareUrl(p), "the Share URL of a published entry");
      const entryUrl = await answers(
        s,
        (await P.loreDetail.shareUrl(p).innerText()).trim(),
        "its Share URL",
      );
      return `share root shown at ${site}; sample root back; ${entryUrl} answers`;
    },
  },
  {
    page: P.settings.route,
    journey: "AllKnower: disconnect, wrong password, log in",
    check: "disconnected, a wrong password refused, connected after logging in",
    allow: [{ method: "POST", path: "/api/auth/login", status: 401 }],
    async run(s) {
      const card = await serviceCard(s, "AllKnower");
      await disconnect(card, "AllKnower");
      await P.settings.button(card, "Login").click();
      await P.settings.field(card, "Email").fill(s.account.email);
      await P.settings.field(card, "Password").fill(`not-${s.account.password}`);
      await P.settings.button(card, "Login").click();
      await shown(P.settings.errorText(card), "the error after a wrong password");
      check(
        !(await P.settings.status(card, "Connected").isVisible()),
        "a wrong password connected",
      );
      await P.settings.field(card, "Password").fill(s.account.password);
      await P.settings.button(card, "Login").click();
      await shown(P.settings.status(card, "Connected"), "AllKnower: Connected after logging in");
      await stillConnected(s, "AllKnower");
    },
  },
  {
    page: P.settings.route,
    journey: "AllCodex: disconnect, connect with a token",
    check: "disconnected, then connected with Core's address and an ETAPI token",
    async run(s) {
      const card = await serviceCard(s, "AllCodex");
      await disconnect(card, "AllCodex");
      await P.settings.tab(card, "ETAPI Token").click();
      await P.settings.field(card, "Service URL").fill(s.core.url);
      await P.settings.field(card, "ETAPI Token").fill(s.core.token);
      await P.settings.button(card, "Connect").click();
      await shown(P.settings.status(card, "Connected"), "AllCodex: Connected after Connect");
      await stillConnected(s, "AllCodex");
    },
  },
];
