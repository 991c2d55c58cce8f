/**
 * The write journal: records live while a request's write is under way and go with its answer;
 * what a stopped instance left is swept once, by one instance, only after its heartbeat lapsed.
 */
import assert from "node:assert/strict";
import { jsonLogger } from "../http/log.ts";
import { memoryStore } from "../store/shared_store.ts";
import { manualDeadlines } from "../../tests/helpers/manual_deadlines.ts";
import {
  createWriteJournal,
  HEARTBEAT_MS,
  SWEEP_EVERY_MS,
  type WriteRecord,
} from "./write_journal.ts";

const tick = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
};

Deno.test("write journal, files: a record lives from the first note created to the answer", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    const journal = createWriteJournal({
      dataDir,
      instanceId: "one",
      log: jsonLogger("silent"),
    });
    const writes = journal.open("req-1", "/api/lore");
    const files = () => {
      try {
        return [...Deno.readDirSync(`${dataDir}/writes`)].map((e) => e.name);
      } catch {
        return [];
      }
    };
    assert.deepEqual(files(), [], "nothing written before a note is created");
    await writes.created("http://core:8080", "note1");
    await writes.created("http://core:8080", "note2");
    const record = JSON.parse(Deno.readTextFileSync(`${dataDir}/writes/req-1.json`));
    assert.deepEqual(record.notes, ["note1", "note2"]);
    await writes.close();
    assert.deepEqual(files(), []);
    // after the answer, what the request still creates (a stream's later work) is not recorded
    await writes.created("http://core:8080", "note3");
    assert.deepEqual(files(), []);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("write journal, files: at start an earlier run's records are swept and logged", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    const killed = createWriteJournal({ dataDir, instanceId: "old", log: jsonLogger("silent") });
    await killed.open("req-9", "/api/lore/upload-image").created("http://core:8080", "img1");
    const lines: string[] = [];
    const next = createWriteJournal({
      dataDir,
      instanceId: "new",
      log: jsonLogger("debug", (l) => lines.push(l)),
    });
    const swept: WriteRecord[] = [];
    next.start((r) => {
      swept.push(r);
      return Promise.resolve("removed");
    });
    await tick();
    assert.deepEqual(swept.map((r) => [r.route, r.notes]), [["/api/lore/upload-image", ["img1"]]]);
    assert.ok(lines.some((l) => l.includes("removed what a write cut off") && l.includes("img1")));
    assert.deepEqual([...Deno.readDirSync(dataDir)], [], "the records and their folder are gone");
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("write journal, shared: a live instance's records stay; a dead one's are swept once", async () => {
  const time = manualDeadlines();
  const store = memoryStore({ maxKeys: 100, now: time.now });
  const journal = (instanceId: string) =>
    createWriteJournal({
      store,
      dataDir: "unused",
      instanceId,
      log: jsonLogger("silent"),
      deadlines: time,
    });
  const [a, b, c] = [journal("a"), journal("b"), journal("c")];
  const swept: string[] = [];
  const sweeper = (who: string) => (r: WriteRecord) => {
    swept.push(`${who}:${r.notes.join()}`);
    return Promise.resolve("removed" as const);
  };
  try {
    await a.open("req-1", "/api/lore").created("http://core:8080", "n1");
    b.start(sweeper("b"));
    c.start(sweeper("c"));
    await tick();
    assert.deepEqual(swept, [], "a is alive: its write is under way");
    // a dies: its heartbeat stops, and lapses after three missed renewals
    a.close();
    time.advance(HEARTBEAT_MS * 3);
    await tick();
    time.advance(SWEEP_EVERY_MS);
    await tick();
    assert.equal(swept.length, 1, swept.join());
    assert.match(swept[0], /^[bc]:n1$/);
    assert.deepEqual(await store.keys("write:"), [], "the record is gone");
  } finally {
    for (const j of [a, b, c]) j.close();
  }
});
