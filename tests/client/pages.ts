/**
 * The UI's pages as `deno task test:client` finds its way around them: for each page its path,
 * the name of its screenshot, what shows that it rendered, and the controls the journeys use —
 * found the way a user finds them (roles, labels, placeholders, visible text), as the UI's code
 * names them (the component in each comment). One place per page, so a change of wording in the
 * UI is one change here.
 *
 * @module
 */
import type { Locator, Page } from "playwright-core";

/** A page of the UI. */
export interface PortalPage {
  /** The route as the UI's `app/(portal)` tree names it, e.g. `/lore/[id]/edit`. */
  route: string;
  /** File name of its screenshot, without `.png`. */
  shot: string;
  /** What shows that the page rendered (its main heading or title). */
  ready(p: Page): Locator;
}

/**
 * A regular expression matching `text` literally.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(literal("Quests & Hooks (2)").source, "Quests & Hooks \\(2\\)");
 * ```
 */
export function literal(text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
}

const main = (p: Page) => p.getByRole("main");
const h1 = (p: Page, name: string) => main(p).getByRole("heading", { level: 1, name, exact: true });
/** shadcn's Card (components/ui/card.tsx) holding `text`. */
const card = (p: Page, text: string) =>
  main(p).locator('[data-slot="card"]').filter({ hasText: text });
/** The innermost block holding both `heading` and `control`: one card of a page. */
const block = (p: Page, heading: string, control: Locator) =>
  main(p).locator("div")
    .filter({ has: p.getByRole("heading", { name: heading, exact: true }) })
    .filter({ has: control }).last();
/** The rich-text editor (components/editor/LoreEditor.tsx: BlockNote, a contenteditable textbox). */
const editor = (p: Page) => main(p).getByRole("textbox").and(p.locator("[contenteditable=true]"));

/** app/(portal)/page.tsx */
export const dashboard = {
  route: "/",
  shot: "dashboard",
  ready: (p: Page) => h1(p, "Chronicle Overview"),
  stat: (p: Page, label: "Total Lore Entries" | "Updated This Week" | "RAG Indexed") =>
    card(p, label),
  systemStatus: (p: Page) => card(p, "System Status"),
  recentEntry: (p: Page, title: string) =>
    card(p, "Recent Entries").getByRole("link", { name: literal(title) }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/lore/page.tsx: the cards carry `aria-label="<title>, <type>, modified <date>"` */
export const loreList = {
  route: "/lore",
  shot: "lore",
  ready: (p: Page) => h1(p, "Lore Browser"),
  entry: (p: Page, title: string) =>
    main(p).getByRole("link", { name: new RegExp(`^${literal(title).source},`) }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/lore/new/page.tsx, components/editor/TemplatePicker.tsx, PromotedFields.tsx */
export const loreNew = {
  route: "/lore/new",
  shot: "lore-new",
  ready: (p: Page) => h1(p, "New Lore Entry"),
  title: (p: Page) => main(p).getByPlaceholder("e.g. Aelarion the Undying"),
  chooseTemplate: (p: Page) => main(p).getByRole("button", { name: "+ Choose a template..." }),
  templateDialog: (p: Page) => p.getByRole("dialog", { name: "Choose a Template" }),
  template: (p: Page, label: string) =>
    p.getByRole("dialog", { name: "Choose a Template" }).getByRole("button", {
      name: new RegExp(`^${literal(label).source}`),
    }),
  field: (p: Page, label: string) => main(p).getByLabel(label, { exact: true }),
  editor,
  create: (p: Page) => main(p).getByRole("button", { name: "Create Entry" }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/lore/[id]/page.tsx, components/portal/ShareSettings.tsx, RelationshipGraph.tsx */
export const loreDetail = {
  route: "/lore/[id]",
  shot: "lore-detail",
  ready: (p: Page) => main(p).getByRole("heading", { level: 1 }),
  title: (p: Page) => main(p).getByRole("heading", { level: 1 }),
  gm: (p: Page) => main(p).getByRole("button", { name: "GM", exact: true }),
  player: (p: Page) => main(p).getByRole("button", { name: "Player", exact: true }),
  playerSafe: (p: Page) => main(p).getByText("Player-safe preview"),
  gmWarning: (p: Page) => main(p).getByText("This entry contains GM-only content."),
  /** The rail's "<Type> Details" list: a label and its value. */
  detail: (p: Page, label: string) =>
    main(p).getByRole("complementary").getByText(label, { exact: true }),
  portrait: (p: Page, title: string) =>
    main(p).getByRole("img", { name: `${title} portrait`, exact: true }),
  image: (p: Page, alt: string) => main(p).getByRole("img", { name: alt, exact: true }),
  text: (p: Page, text: string) => main(p).getByText(text),
  sharing: (p: Page) => card(p, "Share URL"),
  /** The Sharing card's visibility badge: "Visible" or "GM Only". */
  visibility: (p: Page, state: "Visible" | "GM Only") =>
    card(p, "Share URL").getByText(state, { exact: true }),
  shareUrl: (p: Page) => card(p, "Share URL").getByText(/\/share\//),
  /** The article's "Related Entries" section (the note's relations and backlinks). */
  related: (p: Page, title: string) =>
    main(p).locator("section").filter({ has: p.getByRole("heading", { name: "Related Entries" }) })
      .getByText(title, { exact: true }),
  relationshipMap: (p: Page) => main(p).getByRole("button", { name: "Relationship Map" }),
  relationshipCard: (p: Page) => card(p, "Relationship Map"),
  apply: (p: Page) =>
    card(p, "Relationship Map").getByRole("button", { name: "Apply", exact: true }),
  applied: (p: Page) => card(p, "Relationship Map").getByRole("button", { name: "Applied" }),
  noRelations: (p: Page) => main(p).getByText("No relationships found for this entry."),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/lore/[id]/edit/page.tsx */
export const loreEdit = {
  route: "/lore/[id]/edit",
  shot: "lore-edit",
  ready: (p: Page) => h1(p, "Edit Lore Entry"),
  title: (p: Page) => main(p).getByPlaceholder("Name this entry"),
  editor,
  saveStatus: (p: Page, status: "Saved" | "Saving..." | "Unsaved") =>
    main(p).getByText(status, { exact: true }),
  saveMetadata: (p: Page) => main(p).getByRole("button", { name: "Save Metadata" }),
  field: (p: Page, label: string) => main(p).getByLabel(label, { exact: true }),
  portraitSearch: (p: Page) => main(p).getByLabel("Find existing image note"),
  portraitResult: (p: Page, title: string) =>
    main(p).getByRole("button", { name: new RegExp(`^${literal(title).source}`) }),
  portraitId: (p: Page) => main(p).getByLabel("Portrait image note ID"),
  portraitUpload: (p: Page) => main(p).getByLabel("Upload portrait image"),
  pendingPortrait: (p: Page) => main(p).getByText(/^Pending portrait relation: /),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/search/page.tsx */
export const search = {
  route: "/search",
  shot: "search",
  ready: (p: Page) => h1(p, "Chronicle Search"),
  semantic: (p: Page) => main(p).getByRole("tab", { name: "Semantic (AI)" }),
  query: (p: Page) => main(p).getByPlaceholder("Describe what you're looking for…"),
  submit: (p: Page) => main(p).getByRole("button", { name: "Search", exact: true }),
  count: (p: Page) => main(p).getByText(/^\d+ results? \(semantic\)$/),
  result: (p: Page, title: string) => main(p).getByRole("link", { name: literal(title) }),
  noResults: (p: Page) => main(p).getByText(/^No results found for/),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/brain-dump/page.tsx */
export const brainDump = {
  route: "/brain-dump",
  shot: "brain-dump",
  ready: (p: Page) => h1(p, "Brain Dump"),
  mode: (p: Page, label: "Auto-Create" | "Review First" | "Inbox") =>
    main(p).getByRole("button", { name: label, exact: true }),
  text: (p: Page) => main(p).getByPlaceholder(/^Write anything/),
  process: (p: Page) => main(p).getByRole("button", { name: "Process with AllKnower" }),
  analyse: (p: Page) => main(p).getByRole("button", { name: "Analyse", exact: true }),
  complete: (p: Page) => main(p).getByRole("heading", { name: "Processing Complete" }),
  review: (p: Page) => main(p).getByRole("heading", { name: "Review Proposed Entities" }),
  commit: (p: Page) => main(p).getByRole("button", { name: /^Commit \d+ Approved$/ }),
  /** The result after processing or committing: its figures read "<n> Created", "<n> Updated". */
  result: (p: Page) => block(p, "Processing Complete", p.getByText("Created", { exact: true })),
  entity: (p: Page, title: string) => main(p).getByRole("link", { name: literal(title) }),
  history: (p: Page) => main(p).locator('a[href^="/brain-dump/"]'),
  historyEntry: (p: Page, text: string) =>
    main(p).getByRole("link").filter({ hasText: text }).and(p.locator('[href^="/brain-dump/"]')),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/brain-dump/[id]/page.tsx */
export const brainDumpDetail = {
  route: "/brain-dump/[id]",
  shot: "brain-dump-detail",
  ready: (p: Page) => h1(p, "Brain Dump Detail"),
  rawText: (p: Page, text: string) => main(p).getByRole("blockquote").filter({ hasText: text }),
  affected: (p: Page) => main(p).getByRole("heading", { name: "Entries Affected" }),
  /** An entry card: a link to the note when it has one, its title (as the model named it) inside. */
  entry: (p: Page, title: string) =>
    main(p).getByRole("link", { name: literal(title) }).and(p.locator('[href^="/lore/"]')),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/session/page.tsx */
export const session = {
  route: "/session",
  shot: "session",
  ready: (p: Page) => h1(p, "Session Workspace"),
  pinSearch: (p: Page) => main(p).getByPlaceholder("Search to pin a note…"),
  statblockSearch: (p: Page) => main(p).getByPlaceholder("Search statblocks…"),
  choice: (p: Page, title: string) => main(p).getByRole("button", { name: title, exact: true }),
  pinned: (p: Page, title: string) => main(p).getByRole("link", { name: title, exact: true }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/quests/page.tsx: three columns by status */
export const quests = {
  route: "/quests",
  shot: "quests",
  ready: (p: Page) => h1(p, "Quests & Hooks"),
  quest: (p: Page, title: string) => main(p).getByRole("link", { name: title, exact: true }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/timeline/page.tsx */
export const timeline = {
  route: "/timeline",
  shot: "timeline",
  ready: (p: Page) => h1(p, "Timeline"),
  event: (p: Page, title: string) => main(p).getByText(title, { exact: true }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/statblocks/page.tsx: no heading, the library's title in its left pane */
export const statblocks = {
  route: "/statblocks",
  shot: "statblocks",
  ready: (p: Page) => main(p).getByText("Statblock Library", { exact: true }),
  entry: (p: Page, name: string) => main(p).getByRole("button", { name: literal(name) }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/ai/consistency/page.tsx */
export const consistency = {
  route: "/ai/consistency",
  shot: "ai-consistency",
  ready: (p: Page) => h1(p, "Consistency Check"),
  run: (p: Page) => main(p).getByRole("button", { name: "Run Check" }),
  summary: (p: Page) => card(p, "Summary"),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/ai/gaps/page.tsx */
export const gaps = {
  route: "/ai/gaps",
  shot: "ai-gaps",
  ready: (p: Page) => h1(p, "Lore Gap Detector"),
  scan: (p: Page) => main(p).getByRole("button", { name: "Scan for Gaps" }),
  outcome: (p: Page) =>
    main(p).getByRole("heading", { name: /Priority$/ }).or(
      main(p).getByText("No gaps detected. Your chronicle appears complete."),
    ).first(),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/ai/relationships/page.tsx (`?noteId=` fills the text from the note) */
export const relationships = {
  route: "/ai/relationships",
  shot: "ai-relationships",
  ready: (p: Page) => h1(p, "Relationship Suggestions"),
  text: (p: Page) => main(p).getByPlaceholder("Paste the text of a lore entry here…"),
  find: (p: Page) => main(p).getByRole("button", { name: "Find Connections" }),
  count: (p: Page) => main(p).getByText(/^\d+ suggested connections$/),
  apply: (p: Page) => main(p).getByRole("button", { name: "Apply", exact: true }),
  applied: (p: Page) => main(p).getByRole("button", { name: "Applied" }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/import/page.tsx */
export const importPage = {
  route: "/import",
  shot: "import",
  ready: (p: Page) => h1(p, "Import"),
  azgaarTab: (p: Page) => main(p).getByRole("tab", { name: "Azgaar Map" }),
  chooseFile: (p: Page) => main(p).getByText("Click to choose a file").filter({ visible: true }),
  /** The preview of a map: its name, then "<n> Nations", "<n> Cities", … */
  preview: (p: Page, mapName: string) =>
    main(p).locator("div").filter({ has: p.getByText(mapName, { exact: true }) })
      .filter({ hasText: "Nations" }).last(),
  importFrom: (p: Page, mapName: string) =>
    main(p).getByRole("button", { name: `Import from "${mapName}"` }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/shared/page.tsx */
export const shared = {
  route: "/shared",
  shot: "shared",
  ready: (p: Page) => h1(p, "Shared Content"),
  entry: (p: Page, title: string) => main(p).getByRole("link", { name: title, exact: true }),
  total: (p: Page) => main(p).getByRole("button", { name: /Total$/ }),
  viewSite: (p: Page) => main(p).getByRole("link", { name: "View Share Site" }),
} satisfies PortalPage & Record<string, unknown>;

/** app/(portal)/settings/page.tsx: one card per service, then the portal and share cards */
export const settings = {
  route: "/settings",
  shot: "settings",
  ready: (p: Page) => h1(p, "Service Connections"),
  /** The card of a service (AllKnower: the Parser; AllCodex: Core). */
  service: (p: Page, name: "AllKnower" | "AllCodex") =>
    block(p, name, p.getByRole("button", { name: "Advanced / Override" })),
  advanced: (c: Locator) => c.getByRole("button", { name: "Advanced / Override" }),
  status: (c: Locator, state: "Connected" | "Disconnected" | "Error") =>
    c.getByText(new RegExp(`^${state}`)),
  disconnect: (c: Locator) => c.getByRole("button", { name: "Disconnect" }),
  button: (c: Locator, name: string) => c.getByRole("button", { name, exact: true }),
  /** An input by its label (a Radix tab panel is labelled by its tab, so inputs only). */
  field: (c: Locator, label: string) =>
    c.locator("input").and(c.getByLabel(label, { exact: true })),
  tab: (c: Locator, name: "ETAPI Token" | "Password Login") => c.getByRole("tab", { name }),
  /** The card's error line: the UI shows the caught error as `String(e)`, "Error: …". */
  errorText: (c: Locator) => c.getByText(/^\w*Error: /),
  share: (p: Page) => block(p, "Share Configuration", p.getByLabel("Set Share Root Note ID")),
  shareRootId: (p: Page) => main(p).getByLabel("Set Share Root Note ID"),
  /** Shown in the share card once a share root is configured. */
  currentShareRoot: (p: Page) => main(p).getByText("Current share root", { exact: true }),
} satisfies PortalPage & Record<string, unknown>;

/** Every page, in the order the visits run. */
export const PAGES: readonly PortalPage[] = [
  dashboard,
  loreList,
  loreNew,
  loreDetail,
  loreEdit,
  search,
  brainDump,
  session,
  quests,
  timeline,
  statblocks,
  consistency,
  relationships,
  gaps,
  importPage,
  shared,
  settings,
  brainDumpDetail,
];
