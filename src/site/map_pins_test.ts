import assert from "node:assert/strict";
import {
  labelWidth,
  PHONE_MAP_WIDTH,
  PIN_LABEL_SIZE,
  PIN_TARGET_RADIUS,
  type PinPoint,
  type PlacedPin,
  placePins,
} from "./map_pins.ts";

/** A label's box in px on a map `width` wide, from the markup's values (glyphs' usual extent). */
function box(p: PlacedPin<PinPoint>, width: number, height: number) {
  const x = (p.left / 100) * width + p.label!.dx;
  const baseline = (p.top / 100) * height + p.label!.dy;
  const w = labelWidth(p.label!.text);
  const x0 = { start: x, end: x - w, middle: x - w / 2 }[p.label!.anchor];
  return {
    x0,
    x1: x0 + w,
    y0: baseline - 0.8 * PIN_LABEL_SIZE,
    y1: baseline + 0.25 * PIN_LABEL_SIZE,
  };
}

/** A small deterministic generator (mulberry32). */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TITLES = ["Gull Cove", "Saltmarrow Harbor", "The Knucklebone Reef", "Wreck", "Ómura-jima"];

Deno.test("placePins: every label and tap target stays on the map, whatever its size", () => {
  const rng = random(7);
  for (
    const size of [{ width: 64, height: 48 }, { width: 960, height: 640 }, {
      width: 5000,
      height: 900,
    }]
  ) {
    for (const width of [PHONE_MAP_WIDTH, PHONE_MAP_WIDTH * 4, size.width]) {
      const height = (width * size.height) / size.width;
      const pins = Array.from({ length: 12 }, (_, i) => ({
        x: Math.round(rng() * size.width),
        y: Math.round(rng() * size.height),
        title: TITLES[i % TITLES.length],
      }));
      // corners and edges too
      pins.push({ x: 0, y: 0, title: "Corner" }, { x: size.width, y: size.height, title: "Far" });
      const placed = placePins(pins, size, width);
      assert.equal(placed.length, pins.length);
      for (const p of placed) {
        const cx = (p.left / 100) * width + p.shiftX;
        const cy = (p.top / 100) * height + p.shiftY;
        if (width >= 2 * PIN_TARGET_RADIUS && height >= 2 * PIN_TARGET_RADIUS) {
          assert.ok(
            cx - PIN_TARGET_RADIUS >= -0.1 && cx + PIN_TARGET_RADIUS <= width + 0.1,
            `${cx}`,
          );
          assert.ok(
            cy - PIN_TARGET_RADIUS >= -0.1 && cy + PIN_TARGET_RADIUS <= height + 0.1,
            `${cy}`,
          );
        }
        if (!p.label) continue;
        const b = box(p, width, height);
        const where = `${p.pin.title} on ${size.width}×${size.height} at ${width}px`;
        assert.ok(b.x0 >= 0 && b.x1 <= width, `${where}: ${JSON.stringify(b)}`);
        assert.ok(b.y0 >= 0 && b.y1 <= height, `${where}: ${JSON.stringify(b)}`);
        assert.equal(p.whole, p.label.text === p.pin.title);
      }
    }
  }
});

Deno.test("placePins: neighbours' labels go where they do not cover each other", () => {
  const size = { width: 960, height: 640 };
  const pins = [
    { x: 300, y: 300, title: "Saltmarrow Harbor" },
    { x: 330, y: 305, title: "Gull Cove" },
    { x: 310, y: 320, title: "Old Quay" },
  ];
  const placed = placePins(pins, size, PHONE_MAP_WIDTH);
  const boxes = placed.map((p) => box(p, PHONE_MAP_WIDTH, (PHONE_MAP_WIDTH * 640) / 960));
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i], boxes[j]];
      const overlap = a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
      assert.ok(!overlap, `${pins[i].title} covers ${pins[j].title}`);
    }
  }
  // alone, a pin left of the middle is labelled on its right, level with it
  const [alone] = placePins([pins[0]], size, PHONE_MAP_WIDTH);
  assert.deepEqual(
    { anchor: alone.label?.anchor, dx: alone.label?.dx },
    { anchor: "start", dx: 12 },
  );
});

Deno.test("placePins: a title too long for the map is shortened; none fits a tiny one", () => {
  const title = "The Great Lighthouse of the Northern Salt Marshes and Beyond";
  const [mid] = placePins([{ x: 480, y: 320, title }], { width: 960, height: 640 }, 326);
  assert.equal(mid.whole, false);
  assert.match(mid.label!.text, /^The Great .*…$/);
  // in the middle of the map: centred under its pin, where it has the map's whole width
  assert.equal(mid.label!.anchor, "middle");
  assert.ok(labelWidth(mid.label!.text) > 326 / 2 && labelWidth(mid.label!.text) <= 326);
  // four times as wide, the whole title fits
  const [zoomed] = placePins([{ x: 480, y: 320, title }], { width: 960, height: 640 }, 326 * 4);
  assert.equal(zoomed.label?.text, title);
  // a map drawn 20 px wide: the pin stays, with no label
  const [tiny] = placePins([{ x: 10, y: 10, title }], { width: 20, height: 20 }, 20);
  assert.equal(tiny.label, null);
  assert.equal(tiny.whole, false);
});

Deno.test("placePins: pins outside the image are left out; positions are percentages", () => {
  const placed = placePins(
    [
      { x: -1, y: 10, title: "West" },
      { x: 10, y: 641, title: "South" },
      { x: 240, y: 160, title: "Inside" },
    ],
    { width: 960, height: 640 },
    326,
  );
  assert.deepEqual(placed.map((p) => [p.pin.title, p.left, p.top]), [["Inside", 25, 25]]);
});
