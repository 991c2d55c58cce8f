/**
 * The HTML engine — parse5 (HTML read as a browser reads it) and sanitize-html (the allow-list,
 * with its CSS parser) — loaded by the first request that parses or sanitizes HTML, not at
 * start-up: the two are about a third of the service's idle memory, and many processes serve
 * JSON for a long time before any HTML.
 *
 * This is the only module that names the two packages, and only in `import()` (string literals,
 * so `deno compile` still embeds them). The parsing and sanitizing functions stay synchronous and
 * read the packages through {@linkcode htmlEngine}, which throws until
 * {@linkcode loadHtmlEngine} has resolved: HTML reached too early fails its request, it is never
 * passed on unsanitized. The async code in front of them awaits `loadHtmlEngine()` first.
 *
 * Loading needs `--allow-env`: sanitize-html's CSS parser (postcss → picocolors) reads
 * `CI`/`FORCE_COLOR`/`TERM` as it loads.
 *
 * @module
 */

/** parse5's default tree types: `Tree["element"]`, `Tree["documentFragment"]`, … */
export type Tree = import("parse5").DefaultTreeAdapterMap;
/** A start tag as parse5's tokenizer reports it. */
export type TagToken = import("parse5").Token.TagToken;
/** sanitize-html's options. */
export type SanitizeOptions = import("sanitize-html").IOptions;
/** An element's attributes as sanitize-html hands them to a transform. */
export type SanitizeAttributes = import("sanitize-html").Attributes;
/** A sanitize-html tag transform. */
export type SanitizeTransformer = import("sanitize-html").Transformer;
/** An element as sanitize-html's `exclusiveFilter` sees it. */
export type SanitizeFrame = import("sanitize-html").IFrame;

/** The loaded packages. */
export interface HtmlEngine {
  parse5: typeof import("parse5");
  sanitizeHtml: typeof import("sanitize-html");
}

let engine: HtmlEngine | undefined;
let loading: Promise<HtmlEngine> | undefined;

/**
 * Loads the engine once; later calls get the same promise. A failed load is tried again by the
 * next call.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * await loadHtmlEngine();
 * assert.equal(htmlEngine().sanitizeHtml("<b>x</b><script>y</script>"), "<b>x</b>");
 * ```
 */
export function loadHtmlEngine(): Promise<HtmlEngine> {
  return loading ??= Promise.all([
    import("parse5"),
    // @ts-types="@types/sanitize-html"
    import("sanitize-html"),
  ]).then(
    ([parse5, sanitizeHtml]) => engine = { parse5, sanitizeHtml: sanitizeHtml.default },
    (e) => {
      loading = undefined;
      throw e;
    },
  );
}

/**
 * The loaded engine, for synchronous code. Throws before {@linkcode loadHtmlEngine} has resolved,
 * so HTML that reaches a parser or sanitizer too early fails closed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * await loadHtmlEngine();
 * assert.equal(typeof htmlEngine().parse5.parseFragment, "function");
 * ```
 */
export function htmlEngine(): HtmlEngine {
  if (engine === undefined) {
    throw new Error("The HTML engine is not loaded: await loadHtmlEngine() before using it");
  }
  return engine;
}
