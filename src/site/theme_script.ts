/**
 * The site's one script, a progressive enhancement: a button in the header that switches the
 * colours between the system's scheme, light and dark, remembered in `localStorage` and applied
 * as `data-theme` on `<html>`, which the stylesheet honours over `prefers-color-scheme`. Without
 * it (no script, storage refused) there is no button and the system's scheme applies.
 *
 * Pages load it in `<head>`, not deferred: it is tiny and cached long under a versioned URL, so
 * the stored choice is applied before the first paint (no flash of the other scheme); the button
 * is added once the header is parsed. Served at `/public/theme.js`, compiled in like the
 * stylesheet.
 *
 * @module
 */
import { assetVersion } from "./headers.ts";

/** `localStorage` key of the visitor's choice (absent: the system's scheme). */
export const THEME_STORAGE_KEY = "lore-theme";

/**
 * The script. Plain ES2017, no module: it runs as the page is parsed, and only ever sets
 * `data-theme` to `light` or `dark`, whatever storage holds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.doesNotThrow(() => new Function(THEME_JS)); // it parses as a classic script
 * ```
 */
export const THEME_JS = `(function () {
  "use strict";
  var KEY = ${JSON.stringify(THEME_STORAGE_KEY)};
  var root = document.documentElement;
  var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)");
  function stored() {
    try {
      var value = window.localStorage.getItem(KEY);
      return value === "light" || value === "dark" ? value : "system";
    } catch (e) {
      return "system";
    }
  }
  function apply(theme) {
    if (theme === "system") root.removeAttribute("data-theme");
    else root.setAttribute("data-theme", theme);
  }
  function save(theme) {
    try {
      if (theme === "system") window.localStorage.removeItem(KEY);
      else window.localStorage.setItem(KEY, theme);
    } catch (e) {
      // storage refused: the choice lasts for this page only
    }
  }
  apply(stored()); // before the first paint
  // From the system's scheme the other one comes first, so the first click always shows.
  function next(theme) {
    var order = dark && dark.matches ? ["system", "light", "dark"] : ["system", "dark", "light"];
    return order[(order.indexOf(theme) + 1) % order.length];
  }
  function mount() {
    var header = document.querySelector(".site-header");
    if (!header) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "theme-toggle";
    button.title = "Colours: the system's, light or dark";
    var current = root.getAttribute("data-theme") || "system";
    function show() {
      button.textContent = "Theme: " + current.charAt(0).toUpperCase() + current.slice(1);
    }
    button.addEventListener("click", function () {
      current = next(current);
      apply(current);
      save(current);
      show();
    });
    // another tab's choice
    window.addEventListener("storage", function (event) {
      if (event.key !== KEY && event.key !== null) return;
      current = stored();
      apply(current);
      show();
    });
    show();
    header.appendChild(button);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
`;

/**
 * A short digest of {@linkcode THEME_JS}: the script's ETag and cache-busting version.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.match(`/public/theme.js?v=${THEME_JS_VERSION}`, /^\/public\/theme\.js\?v=[\w-]+$/);
 * ```
 */
export const THEME_JS_VERSION: string = assetVersion(THEME_JS);
