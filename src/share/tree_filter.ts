/**
 * The public share filter: decides, from a snapshot of the share root's subtree, which notes the
 * public may see, which aliases resolve, and which credentials guard each note.
 *
 * Everything fails closed: unknown, unreachable, malformed or ambiguous input is never public.
 * Core itself only blanks the rendered content of `#draft`/`#gmOnly` notes and leaks them through
 * several routes, so this module is the only real guard.
 *
 * @module
 */

/** One entry of a note's effective attribute list; `noteId` is the OWNER (differs when inherited). */
export interface ShareAttribute {
  noteId: string;
  type: "label" | "relation";
  name: string;
  value: string;
  isInheritable: boolean;
}

/** A note as ETAPI returns it, reduced to what the filter reads. */
export interface ShareNote {
  noteId: string;
  title: string;
  isProtected: boolean;
  parentNoteIds: readonly string[];
  childNoteIds: readonly string[];
  attributes: readonly ShareAttribute[];
}

/** The share root and all its descendants (`search=note.noteId != ''&ancestorNoteId=<root>`). */
export interface ShareSnapshot {
  rootId: string;
  notes: readonly ShareNote[];
}

/** Per-note labels that matter for sharing, as reported to the admin view. */
export interface ShareFlags {
  isDraft: boolean;
  isGmOnly: boolean;
  isProtected: boolean;
  shareAlias: string | null;
}

/**
 * One `#shareCredentials` guard on the way to a note: the note that owns the labels (the branch,
 * or a template outside the share) and the "user:pass" values it accepts.
 */
export interface CredentialGuard {
  /** The noteId owning the labels; never shown to a visitor. */
  owner: string;
  values: readonly string[];
}

/** Read-only answers about one snapshot; see {@link buildShareView}. */
export interface ShareView {
  readonly rootId: string;
  /** True only for notes reachable from the root through no flagged note. */
  isPublic(noteId: string): boolean;
  /**
   * noteId or `#shareAlias` → public noteId; undefined for missing AND hidden alike (no existence
   * oracle). Alias is tried first, like Core.
   */
  resolve(idOrAlias: string): string | undefined;
  /**
   * Credential groups guarding a public note: each group is the list of "user:pass" values of one
   * credentialed note on a path from the root; access needs a match in EVERY group. Empty = open.
   * For a note that is not public the answer is one empty group, which nothing can satisfy.
   */
  credentialGroups(noteId: string): readonly (readonly string[])[];
  /** The same groups with the note owning each ({@linkcode CredentialGuard}), in that order. */
  credentialGuards(noteId: string): readonly CredentialGuard[];
  /** The alias that resolves to this note; only for public notes that won their alias. */
  aliasOf(noteId: string): string | undefined;
  /** Public notes in BFS order from the root, children in `childNoteIds` order. */
  publicIds(): readonly string[];
  /** Flags of any note in the snapshot, hidden or not (for the authenticated admin view). */
  flags(noteId: string): ShareFlags | undefined;
}

const HIDING_LABELS = ["draft", "gmOnly"] as const;
const ALIAS = "shareAlias";
const CREDENTIALS = "shareCredentials";

/** A guard no value can satisfy: the answer for notes that are not public. */
const LOCKED: readonly CredentialGuard[] = Object.freeze([
  Object.freeze({ owner: "", values: Object.freeze([] as string[]) }),
]);
const OPEN: readonly CredentialGuard[] = Object.freeze([] as CredentialGuard[]);
const LOCKED_GROUPS: readonly (readonly string[])[] = Object.freeze(LOCKED.map((g) => g.values));

function isLabel(a: unknown, name: string): a is ShareAttribute {
  // ETAPI data is untrusted JSON: check shape instead of relying on the static type.
  if (typeof a !== "object" || a === null) return false;
  const attr = a as Partial<ShareAttribute>;
  return attr.type === "label" && attr.name === name;
}

function attributesOf(note: Pick<ShareNote, "attributes">): readonly unknown[] | null {
  return Array.isArray(note.attributes) ? note.attributes : null;
}

function hasLabel(note: ShareNote, name: string): boolean {
  return attributesOf(note)?.some((a) => isLabel(a, name)) ?? false;
}

/**
 * The note's first own `#shareAlias` whose trimmed value is non-empty (Core's loader keeps one
 * per note; inherited aliases do not count: Core maps an alias to the note that owns it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const label = (noteId: string, value: string) =>
 *   ({ noteId, type: "label", name: "shareAlias", value, isInheritable: false }) as const;
 * assert.equal(
 *   ownShareAlias({ noteId: "n1", attributes: [label("n1", " harbor-town ")] }),
 *   "harbor-town",
 * );
 * // inherited from another note: not this note's alias
 * assert.equal(ownShareAlias({ noteId: "n2", attributes: [label("n1", "harbor-town")] }), null);
 * ```
 */
export function ownShareAlias(note: Pick<ShareNote, "noteId" | "attributes">): string | null {
  for (const a of attributesOf(note) ?? []) {
    if (isLabel(a, ALIAS) && a.noteId === note.noteId && typeof a.value === "string") {
      const alias = a.value.trim();
      if (alias !== "") return alias;
    }
  }
  return null;
}

function isFlagged(note: ShareNote): boolean {
  // Anything but an explicit `false` counts as protected, and an unreadable attribute list could
  // hide a #draft, so both fail closed.
  if (note.isProtected !== false) return true;
  if (attributesOf(note) === null) return true;
  return HIDING_LABELS.some((name) => hasLabel(note, name));
}

function childrenOf(note: ShareNote): readonly unknown[] {
  return Array.isArray(note.childNoteIds) ? note.childNoteIds : [];
}

/**
 * Builds the public view of a share snapshot in O(notes + edges). Credential groups are computed
 * on first request per note (a reverse walk over in-tree parents) and cached.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const note = (noteId: string, childNoteIds: string[], labels: string[] = []): ShareNote => ({
 *   noteId,
 *   title: noteId,
 *   isProtected: false,
 *   parentNoteIds: [],
 *   childNoteIds,
 *   attributes: labels.map((name) => ({
 *     noteId,
 *     type: "label",
 *     name,
 *     value: "",
 *     isInheritable: false,
 *   })),
 * });
 * const view = buildShareView({
 *   rootId: "root1",
 *   notes: [
 *     note("root1", ["town", "cult"]),
 *     note("town", []),
 *     note("cult", ["lair"], ["gmOnly"]),
 *     note("lair", []),
 *   ],
 * });
 * assert.deepEqual(view.publicIds(), ["root1", "town"]); // a #gmOnly note hides its subtree
 * assert.equal(view.resolve("lair"), undefined); // hidden and missing look the same
 * ```
 */
export function buildShareView(snapshot: ShareSnapshot): ShareView {
  const rootId = String(snapshot?.rootId ?? "");
  const byId = new Map<string, ShareNote>();
  const duplicated = new Set<string>();
  for (const note of Array.isArray(snapshot?.notes) ? snapshot.notes : []) {
    if (typeof note !== "object" || note === null || typeof note.noteId !== "string") continue;
    if (byId.has(note.noteId)) duplicated.add(note.noteId);
    else byId.set(note.noteId, note);
  }
  // Two different records for one id: we cannot tell which one is true, so hide it.
  const flagged = (id: string) => duplicated.has(id) || isFlagged(byId.get(id)!);

  // BFS over childNoteIds; also records in-tree parents for the credential walk.
  const order: string[] = [];
  const bfsIndex = new Map<string, number>();
  const parents = new Map<string, string[]>();
  if (byId.has(rootId)) {
    order.push(rootId);
    bfsIndex.set(rootId, 0);
    for (let head = 0; head < order.length; head++) {
      const id = order[head];
      for (const child of childrenOf(byId.get(id)!)) {
        if (typeof child !== "string" || !byId.has(child)) continue;
        const list = parents.get(child);
        if (list) list.push(id);
        else parents.set(child, [id]);
        if (!bfsIndex.has(child)) {
          bfsIndex.set(child, order.length);
          order.push(child);
        }
      }
    }
  }

  // Hidden = everything reachable from a flagged in-tree note (visited set makes cycles safe).
  const hidden = new Set<string>(order.filter(flagged));
  const stack = [...hidden];
  while (stack.length > 0) {
    for (const child of childrenOf(byId.get(stack.pop()!)!)) {
      if (typeof child === "string" && byId.has(child) && !hidden.has(child)) {
        hidden.add(child);
        stack.push(child);
      }
    }
  }

  const publicList = Object.freeze(order.filter((id) => !hidden.has(id)));
  const publicSet = new Set(publicList);

  // Only public notes take part, so a hidden note's alias can never shadow or reveal anything.
  const aliasToId = new Map<string, string>();
  for (const id of publicList) {
    const alias = ownShareAlias(byId.get(id)!);
    if (alias === null) continue;
    const current = aliasToId.get(alias);
    if (current === undefined || id < current) aliasToId.set(alias, id);
  }

  const guardCache = new Map<string, readonly CredentialGuard[]>();
  const groupCache = new Map<string, readonly (readonly string[])[]>();
  const credentialGuards = (noteId: string): readonly CredentialGuard[] => {
    if (!publicSet.has(noteId)) return LOCKED;
    let guards = guardCache.get(noteId);
    if (!guards) guardCache.set(noteId, guards = guardsOf(noteId, { byId, parents, bfsIndex }));
    return guards;
  };

  return Object.freeze({
    rootId,
    isPublic: (noteId: string) => publicSet.has(noteId),
    resolve: (idOrAlias: string) =>
      aliasToId.get(idOrAlias) ?? (publicSet.has(idOrAlias) ? idOrAlias : undefined),
    credentialGroups(noteId: string) {
      if (!publicSet.has(noteId)) return LOCKED_GROUPS;
      let groups = groupCache.get(noteId);
      if (!groups) {
        groups = Object.freeze(credentialGuards(noteId).map((g) => g.values));
        groupCache.set(noteId, groups);
      }
      return groups;
    },
    credentialGuards,
    aliasOf(noteId: string) {
      if (!publicSet.has(noteId)) return undefined;
      const alias = ownShareAlias(byId.get(noteId)!);
      return alias !== null && aliasToId.get(alias) === noteId ? alias : undefined;
    },
    publicIds: () => publicList,
    flags(noteId: string): ShareFlags | undefined {
      const note = byId.get(noteId);
      if (!note) return undefined;
      return {
        isDraft: hasLabel(note, "draft"),
        isGmOnly: hasLabel(note, "gmOnly"),
        isProtected: note.isProtected !== false,
        shareAlias: ownShareAlias(note),
      };
    },
  });
}

/** What {@linkcode guardsOf} reads of the share's tree. */
interface WalkedTree {
  byId: ReadonlyMap<string, ShareNote>;
  /** In-tree parents of each note. */
  parents: ReadonlyMap<string, readonly string[]>;
  /** Each note's place in the breadth-first order from the root. */
  bfsIndex: ReadonlyMap<string, number>;
}

/**
 * The credential guards of a public note: one group per note owning `#shareCredentials` on any
 * walk from the root to it.
 */
function guardsOf(noteId: string, tree: WalkedTree): readonly CredentialGuard[] {
  const { byId, parents, bfsIndex } = tree;
  // Every in-tree note with a walk to noteId (all of them are public when noteId is).
  const seen = new Set<string>([noteId]);
  const todo = [noteId];
  while (todo.length > 0) {
    for (const p of parents.get(todo.pop()!) ?? []) {
      if (!seen.has(p)) {
        seen.add(p);
        todo.push(p);
      }
    }
  }
  const walkNotes = [...seen].sort((a, b) => bfsIndex.get(a)! - bfsIndex.get(b)!);
  // One group per owner. Reading effective lists (not just own labels) also catches credentials
  // that came from a template outside the walk, on the note or on any of its ancestors.
  const groups = new Map<string, string[]>();
  for (const id of walkNotes) {
    for (const a of attributesOf(byId.get(id)!) ?? []) {
      if (!isLabel(a, CREDENTIALS)) continue;
      const owner = String(a.noteId);
      let group = groups.get(owner);
      if (!group) groups.set(owner, group = []);
      // A non-string value still locks the note: its group just has nothing to match.
      if (typeof a.value === "string" && !group.includes(a.value)) group.push(a.value);
    }
  }
  if (groups.size === 0) return OPEN;
  return Object.freeze(
    [...groups].map(([owner, values]) => Object.freeze({ owner, values: Object.freeze(values) })),
  );
}

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/**
 * Compares two strings' UTF-8 bytes in time that depends only on their lengths: the loop runs to
 * the longer length and the length difference is folded into the result, so a mismatch in length
 * does not end the comparison early.
 */
function constantTimeEqual(a: string, b: string): boolean {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  const n = Math.max(x.length, y.length);
  let diff = x.length ^ y.length;
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

const BASIC = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})$/i;

/**
 * The `user:pass` of an `Authorization: Basic …` header; null for anything malformed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(decodeBasic(`Basic ${btoa("gm:secret")}`), "gm:secret");
 * assert.equal(decodeBasic(`Basic ${btoa("no colon")}`), null);
 * assert.equal(decodeBasic("Bearer token"), null);
 * ```
 */
export function decodeBasic(authorization: string | null): string | null {
  if (typeof authorization !== "string") return null;
  const match = BASIC.exec(authorization.trim());
  if (!match || match[1].length % 4 !== 0) return null;
  let binary: string;
  try {
    binary = atob(match[1]);
  } catch {
    return null;
  }
  let decoded: string;
  try {
    decoded = utf8Strict.decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
  // RFC 7617 user-pass always contains a colon; anything else cannot be a credential.
  return decoded.includes(":") ? decoded : null;
}

/** Whether `given` is one of the guard's values; every value is compared, without early exit. */
function opens(guard: CredentialGuard, given: string): boolean {
  let matched = false;
  for (const value of guard.values) matched = constantTimeEqual(given, value) || matched;
  return matched;
}

/**
 * Whether a visitor may see a note: false for a note that is not public, otherwise every guard
 * on its way must be opened, by `given` (a `user:pass`, compared in constant time with every
 * value) or by `unlocked` (the guards the visitor unlocked before, e.g. with the site's form).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const credentials = {
 *   noteId: "vault",
 *   type: "label",
 *   name: "shareCredentials",
 *   value: "gm:secret",
 *   isInheritable: false,
 * } as const;
 * const view = buildShareView({
 *   rootId: "vault",
 *   notes: [{
 *     noteId: "vault",
 *     title: "Vault",
 *     isProtected: false,
 *     parentNoteIds: [],
 *     childNoteIds: [],
 *     attributes: [credentials],
 *   }],
 * });
 * assert.equal(guardsAllow(view, "vault", "gm:wrong"), false);
 * assert.equal(guardsAllow(view, "vault", null, (guard) => guard.owner === "vault"), true);
 * ```
 */
export function guardsAllow(
  view: ShareView,
  noteId: string,
  given: string | null,
  unlocked: (guard: CredentialGuard) => boolean = () => false,
): boolean {
  if (!view.isPublic(noteId)) return false;
  let allowed = true;
  for (const guard of view.credentialGuards(noteId)) {
    const opened = (given !== null && opens(guard, given)) || unlocked(guard);
    allowed = allowed && opened;
  }
  return allowed;
}

/**
 * The guards `given` (a `user:pass`) opens among `guards`, compared in constant time with every
 * value of every guard.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const guards = [
 *   { owner: "vault", values: ["gm:secret", "player:lantern"] },
 *   { owner: "crypt", values: ["gm:bones"] },
 * ];
 * assert.deepEqual(guardsOpenedBy(guards, "player:lantern").map((g) => g.owner), ["vault"]);
 * assert.deepEqual(guardsOpenedBy(guards, "player:wrong"), []);
 * ```
 */
export function guardsOpenedBy(
  guards: Iterable<CredentialGuard>,
  given: string,
): CredentialGuard[] {
  const opened: CredentialGuard[] = [];
  for (const guard of guards) if (opens(guard, given)) opened.push(guard);
  return opened;
}

/**
 * Constant-time check of an `Authorization: Basic …` header against a note's credential groups:
 * true for an open public note, false for a note that is not public, otherwise the decoded
 * `user:pass` must equal one value of every group ({@linkcode guardsAllow}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const credentials = {
 *   noteId: "vault",
 *   type: "label",
 *   name: "shareCredentials",
 *   value: "gm:secret",
 *   isInheritable: false,
 * } as const;
 * const view = buildShareView({
 *   rootId: "vault",
 *   notes: [{
 *     noteId: "vault",
 *     title: "Vault",
 *     isProtected: false,
 *     parentNoteIds: [],
 *     childNoteIds: [],
 *     attributes: [credentials],
 *   }],
 * });
 * assert.equal(basicAuthAllows(view, "vault", null), false); // answer 401
 * assert.equal(basicAuthAllows(view, "vault", `Basic ${btoa("gm:secret")}`), true);
 * ```
 */
export function basicAuthAllows(
  view: ShareView,
  noteId: string,
  authorization: string | null,
): boolean {
  return guardsAllow(view, noteId, decodeBasic(authorization));
}
