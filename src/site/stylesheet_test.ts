import assert from "node:assert/strict";
import { SITE_CSS } from "./stylesheet.ts";

/** WCAG relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** The colours (`--name: #rrggbb`) a rule sets, by the rule's exact selector and context. */
function colours(opening: string): Map<string, string> {
  const at = SITE_CSS.indexOf(opening);
  assert.notEqual(at, -1, `no rule "${opening}"`);
  const body = SITE_CSS.slice(at + opening.length, SITE_CSS.indexOf("}", at));
  return new Map([...body.matchAll(/(--[\w-]+):\s*(#[0-9a-f]{6})/gi)].map((m) => [m[1], m[2]]));
}

const LIGHT = ":root {";
const SYSTEM_DARK = "@media (prefers-color-scheme: dark) {\n  :root:not([data-theme=light]) {";
const CHOSEN_DARK = ":root[data-theme=dark] {";

/** The value of a custom property in the light scheme and in the dark one. */
function schemes(name: string): [light: string, dark: string] {
  const [light, dark] = [colours(LIGHT).get(name), colours(SYSTEM_DARK).get(name)];
  assert.ok(light && dark, name);
  return [light, dark];
}

Deno.test("stylesheet: the search field's border stands out from its background (3:1) in both schemes", () => {
  assert.match(SITE_CSS, /\.search input \{[^}]*border: 1px solid var\(--muted\)/);
  const [mutedLight, mutedDark] = schemes("--muted");
  const [cardLight, cardDark] = schemes("--card");
  assert.ok(contrast(mutedLight, cardLight) >= 3, `light ${contrast(mutedLight, cardLight)}`);
  assert.ok(contrast(mutedDark, cardDark) >= 3, `dark ${contrast(mutedDark, cardDark)}`);
});

Deno.test("stylesheet: a chosen theme overrides the system's scheme, the same colours either way", () => {
  // the system's dark applies unless light was chosen; a choice also sets the controls' scheme
  assert.ok(SITE_CSS.includes(":root[data-theme=light] { color-scheme: light; }"));
  assert.match(SITE_CSS, /:root\[data-theme=dark\] \{ color-scheme: dark;/);
  assert.deepEqual(colours(CHOSEN_DARK), colours(SYSTEM_DARK));
  assert.deepEqual([...colours(LIGHT).keys()].sort(), [...colours(SYSTEM_DARK).keys()].sort());
});

Deno.test("stylesheet: text, muted text and links contrast 4.5:1 with the page and cards in every scheme", () => {
  for (
    const [scheme, opening] of [["light", LIGHT], ["dark", SYSTEM_DARK], [
      "chosen dark",
      CHOSEN_DARK,
    ]]
  ) {
    const c = colours(opening);
    const pairs: [string, string][] = [
      ["--fg", "--bg"],
      ["--muted", "--bg"],
      ["--accent", "--bg"],
      ["--fg", "--card"],
      ["--muted", "--card"],
      ["--accent", "--card"],
      ["--bg", "--accent"], // the search button's label
    ];
    for (const [text, background] of pairs) {
      const ratio = contrast(c.get(text)!, c.get(background)!);
      assert.ok(ratio >= 4.5, `${scheme}: ${text} on ${background} is ${ratio.toFixed(2)}:1`);
    }
  }
});
