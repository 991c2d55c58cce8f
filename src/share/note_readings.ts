/**
 * What the site reads out of each visible note's public content — where it links, its visible
 * text, its first paragraph, its search text, its player HTML — made once per note and kept
 * across snapshots: an entry is reused while the note's content (`blobId`) and own facts are
 * unchanged and every question its render asked of the share still gets the same answer
 * (policy_record.ts). A change
 * to one note costs that note, and the notes whose links named it; the backlinks, lists, feeds
 * and search of a large world are rebuilt from kept readings.
 *
 * @module
 */
import { SANITIZER_VERSION } from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import { htmlToText } from "../sanitize/plain_text.ts";
import { firstParagraph } from "../sanitize/prose.ts";
import type { CoreNote } from "../upstream/core.ts";
import type { KeptStore } from "./kept_store.ts";
import { recordingPolicy, stillAnswered } from "./policy_record.ts";
import {
  contentAddress,
  hasHtmlContent,
  publicContent,
  type PublicLinkPolicy,
  publicRewriter,
  publicSearchText,
  renderPublicContent,
} from "./public_content.ts";
import type { PublicRequest } from "./public_request.ts";
import type { NoteReading } from "./public_types.ts";

export type { NoteReading } from "./public_types.ts";

const NOTHING: NoteReading = { refs: [], text: "", lead: "" };

/**
 * A value kept under `key` while the request's share answers every question as it did when the
 * value was made; else made again by `make` (with a recording policy) and kept. Without a `key` (content that
 * is not content-addressed) it is made every time.
 */
async function kept<T>(
  store: KeptStore<T>,
  req: PublicRequest,
  key: string | null,
  make: (policy: PublicLinkPolicy) => Promise<T>,
): Promise<T> {
  const identity = req.identity;
  const hit = key === null ? undefined : await store.get(identity, key);
  if (hit !== undefined && stillAnswered(hit.answers, req.answers())) return hit.value;
  const { recording, answers } = recordingPolicy(req.policy());
  const value = await make(recording);
  if (key !== null) store.set(identity, key, { answers, value });
  return value;
}

/** Part of a key naming what a note's content is: its id, type, title and blob. */
function contentKey(note: CoreNote): string | null {
  const blobId = contentAddress(note);
  return blobId && [note.noteId, note.type, note.title, blobId, SANITIZER_VERSION].join("\n");
}

/** The reading of a visible note for this request's visitor. */
export async function noteReading(req: PublicRequest, note: CoreNote): Promise<NoteReading> {
  if (!hasHtmlContent(note)) return NOTHING;
  const content = contentKey(note);
  const key = content === null ? null : `${req.access.fingerprint()}\n${content}`;
  const { caches } = req.deps;
  return await kept(caches.readings, req, key, async (policy) => {
    const raw = await publicContent(req.deps.caches, req.core, req.identity, note);
    // links only: the owner's attachments are not needed to know where it links
    const html = await renderPublicContent(note, raw, publicRewriter(policy, new Map()));
    return {
      refs: [...html.matchAll(/href="\/public\/lore\/([^"#?]+)"/g)].map((m) => decoded(m[1])),
      text: htmlToText(html, (h) => h).replace(/\s+/g, " ").trim(),
      lead: firstParagraph(html),
    };
  });
}

/**
 * A visible note's player HTML when it shows none of the note's own attachments (those are
 * read from Core, outside what a reading records): kept like a reading, so a new snapshot
 * renders again only the notes it touched.
 */
export async function publicHtml(req: PublicRequest, note: CoreNote, raw: string): Promise<string> {
  const content = hasHtmlContent(note) ? contentKey(note) : null;
  const key = content === null ? null : `${req.access.fingerprint()}\n${content}`;
  return await kept(
    req.deps.caches.html,
    req,
    key,
    (policy) => renderPublicContent(note, raw, publicRewriter(policy, new Map())),
  );
}

/** The words a visitor can read in a visible note, normalised for the public search. */
export async function searchText(req: PublicRequest, note: CoreNote): Promise<string> {
  if (!hasHtmlContent(note)) return "";
  await loadHtmlEngine();
  return await kept(
    req.deps.caches.texts,
    req,
    contentKey(note),
    (policy) => publicSearchText(req.deps.caches, req.core, req.identity, note, policy),
  );
}

function decoded(ref: string): string {
  try {
    return decodeURIComponent(ref);
  } catch {
    return ref;
  }
}
