/**
 * What note an `href` or `src` in lore HTML names: every way Core, its share pages, its APIs
 * and this service let a writer point at a note, an image or an attachment. One parser serves
 * the editor view, imports, the copilot and the public side; the public side must recognise
 * every form to fail closed, so recognition is generous (any host, any base path, dot segments,
 * percent-encoding, letter case of the fixed path words, a query or fragment).
 *
 * Pure: nothing here knows which notes exist. A {@linkcode NoteRef} says how a note is named;
 * the caller looks it up.
 *
 * @module
 */

/**
 * A note, share page or attachment named by a URL:
 * - `id`: a note by its noteId, from `#root/…/<id>` (also on an absolute URL), `api/notes/<id>…`
 *   (`/share/api/notes/<id>/download`, `/etapi/notes/<id>/content`, …), `api/lore/<id>…`, and
 *   image URLs `api/images/<id>/<file>`, `api/lore/<id>/image`, `api/public/images/<id>/<file>`
 *   (`image: true`);
 * - `share`: a note as Core's share names it, by `#shareAlias` or noteId (Core tries the alias
 *   first): `/share/<ref>` on any host or relative (`share/<ref>`, `../share/<ref>`), our own
 *   `/public/lore/<ref>` and `/public/maps/<ref>`, and the bare `./<ref>` or `<ref>` Core's share pages write
 *   (`bare: true`, their text being the target's title). `ref` is `""` for the share root
 *   (`/share/`, `./`);
 * - `attachment`: `api/attachments/<id>/…` (`image: true` for `…/image/<file>`).
 *
 * Ids and refs are percent-decoded but not validated: a ref that names no note is the caller's
 * to treat as unknown.
 */
export type NoteRef =
  | { kind: "id"; id: string; image: boolean }
  | { kind: "share"; ref: string; bare: boolean }
  | { kind: "attachment"; id: string; image: boolean };

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const API_WORDS: ReadonlySet<string> = new Set(["api", "etapi"]);

/** A URL's path segments (decoded, dot segments resolved) and its fragment. */
interface UrlParts {
  segments: string[];
  /** The path starts at the root of a host (absolute URL, `//host`, or `/…`). */
  rooted: boolean;
  /** Some `..` segment was met (a bare ref cannot climb). */
  climbed: boolean;
  /** The path had anything in it (`./` names the share root; `""` nothing). */
  hasPath: boolean;
  fragment: string | null;
}

/** `decodeURIComponent`, or the text as it is when it is not valid percent-encoding. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // names nothing, so the caller treats it as unknown (fail closed)
  }
}

function pathParts(path: string): Pick<UrlParts, "segments" | "climbed"> {
  const segments: string[] = [];
  let climbed = false;
  for (const raw of path.split("/")) {
    const segment = decoded(raw);
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      climbed = true;
      segments.pop();
    } else {
      segments.push(segment);
    }
  }
  return { segments, climbed };
}

/** Leading and trailing C0 controls and spaces dropped, as a URL parser drops them. */
function trimControls(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

/** Parts of an http(s), protocol-relative or relative URL; null for any other scheme. */
function urlParts(raw: string): UrlParts | null {
  // What a browser does first: tab and newline vanish anywhere, controls and spaces at the ends;
  // a backslash is a slash in http(s) and relative URLs.
  const url = trimControls(raw.replace(/[\t\n\r]/g, "")).replace(/\\/g, "/");
  const scheme = SCHEME.exec(url)?.[1].toLowerCase();
  if (scheme !== undefined && scheme !== "http" && scheme !== "https") return null;
  if (scheme !== undefined || url.startsWith("//")) {
    let parsed: URL;
    try {
      parsed = new URL(url, "http://relative.invalid");
    } catch {
      return null;
    }
    return {
      ...pathParts(parsed.pathname),
      rooted: true,
      hasPath: true,
      fragment: parsed.hash === "" ? null : parsed.hash.slice(1),
    };
  }
  const hash = url.indexOf("#");
  const path = (hash === -1 ? url : url.slice(0, hash)).replace(/\?[\s\S]*$/, "");
  return {
    ...pathParts(path),
    rooted: path.startsWith("/"),
    hasPath: path !== "",
    fragment: hash === -1 ? null : url.slice(hash + 1),
  };
}

/** `api|etapi/<kind>/<id>/…` anywhere in the path (any base path, `/share/api/…` included). */
function apiRef(segments: readonly string[], lower: readonly string[]): NoteRef | null {
  for (let i = 0; i < segments.length - 2; i++) {
    if (!API_WORDS.has(lower[i])) continue;
    const [kind, id, next] = [lower[i + 1], segments[i + 2], lower[i + 3]];
    if (kind === "notes") return { kind: "id", id, image: false };
    if (kind === "images") return { kind: "id", id, image: true };
    if (kind === "lore") return { kind: "id", id, image: next === "image" };
    if (kind === "attachments") return { kind: "attachment", id, image: next === "image" };
    if (kind === "public" && segments[i + 3] !== undefined) {
      const ref = segments[i + 3];
      if (lower[i + 2] === "lore") return { kind: "share", ref, bare: false };
      if (lower[i + 2] === "images") return { kind: "id", id: ref, image: true };
    }
  }
  return null;
}

/** The path's own ref: API forms, then share pages, then Core's bare relative links. */
function pathRef(parts: UrlParts): NoteRef | null {
  const { segments } = parts;
  const lower = segments.map((s) => s.toLowerCase());
  const api = apiRef(segments, lower);
  if (api !== null) return api;
  const n = segments.length;
  if (n >= 3 && lower[n - 3] === "public" && (lower[n - 2] === "lore" || lower[n - 2] === "maps")) {
    return { kind: "share", ref: segments[n - 1], bare: false };
  }
  if (n >= 2 && lower[n - 2] === "share") {
    return { kind: "share", ref: segments[n - 1], bare: false };
  }
  if (parts.rooted) {
    return n >= 1 && lower[n - 1] === "share" ? { kind: "share", ref: "", bare: false } : null;
  }
  if (parts.climbed || !parts.hasPath || n > 1) return null;
  return { kind: "share", ref: segments[0] ?? "", bare: true };
}

/** `root/<path>/<id>` (Trilium's internal links; a `?…` inside the fragment is ignored). */
function fragmentRef(fragment: string): NoteRef | null {
  const [first, ...rest] = fragment.replace(/\?[\s\S]*$/, "").split("/");
  if (first.toLowerCase() !== "root") return null;
  const ids = rest.map(decoded).filter((s) => s !== "");
  return { kind: "id", id: ids.at(-1) ?? "root", image: false };
}

/**
 * The note, share page or attachment a URL names, else null (an external page, a `mailto:`, an
 * in-page `#anchor`, any other scheme). The path decides when it names something, since that
 * is where a browser goes; otherwise a `#root/…` fragment does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(noteRef("#root/a/b/AbC123"), { kind: "id", id: "AbC123", image: false });
 * assert.deepEqual(
 *   noteRef("HTTP://core.example:8080/share/harbor%20town?x=1#top"),
 *   { kind: "share", ref: "harbor town", bare: false },
 * );
 * assert.deepEqual(noteRef("./AbC123"), { kind: "share", ref: "AbC123", bare: true });
 * assert.deepEqual(
 *   noteRef("/share/api/notes/AbC123/download"),
 *   { kind: "id", id: "AbC123", image: false },
 * );
 * assert.deepEqual(
 *   noteRef("api/attachments/AtT1/image/sigil.png"),
 *   { kind: "attachment", id: "AtT1", image: true },
 * );
 * assert.equal(noteRef("https://example.org/page"), null);
 * assert.equal(noteRef("mailto:gm@example.org"), null);
 * ```
 */
export function noteRef(url: string): NoteRef | null {
  if (typeof url !== "string") return null;
  const parts = urlParts(url);
  if (parts === null) return null;
  const ref = pathRef(parts);
  if (ref !== null) return ref;
  return parts.fragment === null ? null : fragmentRef(parts.fragment);
}
