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

/** The value of a custom property in the light scheme and in the dark one. */
function schemes(name: string): [light: string, dark: string] {
  const found = [...SITE_CSS.matchAll(new RegExp(`${name}:\\s*(#[0-9a-f]{6})`, "gi"))];
  assert.equal(found.length, 2, name);
  return [found[0][1], found[1][1]];
}

Deno.test("stylesheet: the search field's border stands out from its background (3:1) in both schemes", () => {
  assert.match(SITE_CSS, /\.search input \{[^}]*border: 1px solid var\(--muted\)/);
  const [mutedLight, mutedDark] = schemes("--muted");
  const [cardLight, cardDark] = schemes("--card");
  assert.ok(contrast(mutedLight, cardLight) >= 3, `light ${contrast(mutedLight, cardLight)}`);
  assert.ok(contrast(mutedDark, cardDark) >= 3, `dark ${contrast(mutedDark, cardDark)}`);
});
