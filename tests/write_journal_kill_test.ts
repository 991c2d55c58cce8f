/**
 * A process killed in the middle of a multi-step write (SIGKILL: no grace, no clean-up) leaves
 * a created note without the rest of its write and without an answer to its client; the next
 * start finds the journal record it left in `DATA_DIR/writes/` and removes that note from Core,
 * saying so in the log. The Core double holds the write's second step forever, so the kill
 * always lands between the two steps, however fast or slow the machine is.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { startCoreSim } from "../sims/core.ts";
import { eventually } from "./helpers/manual_deadlines.ts";
import { spawnMain } from "./helpers/main_process.ts";

const TITLE = "Written when the process died";

Deno.test("killed mid-write: the next start removes the note the write had created", async () => {
  const core = await startCoreSim();
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-killed-" });
  const env = {
    CORE_URL: core.url,
    CORE_TOKEN: core.token,
    DATA_DIR: dataDir,
    SESSION_SECRET: "a-session-secret-for-the-kill-test-0123456789",
  };
  const titled = () => core.store.noteIds().filter((id) => core.store.getNote(id)?.title === TITLE);
  try {
    // the note is created; adding its #lore label never gets an answer
    core.fault({ method: "POST", path: "/etapi/attributes", hang: true });
    const first = await spawnMain(env);
    try {
      await first.until((lines) => lines.some((l) => l.msg === "listening"));
      const port = first.lines.find((l) => l.msg === "listening")?.port;
      const write = fetch(`http://127.0.0.1:${port}/api/lore`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: TITLE }),
      }).catch(() => null);
      await eventually("the write waits on its second step", () =>
        titled().length === 1 &&
        core.requests.some((r) => r.method === "POST" && r.path === "/etapi/attributes"));
      first.child.kill("SIGKILL");
      await first.child.status;
      assert.equal(await write, null, "the client got no answer");
    } finally {
      await first.close();
    }
    assert.equal(titled().length, 1, "the half-written note is in Core");
    assert.equal([...Deno.readDirSync(`${dataDir}/writes`)].length, 1, "and its record on disk");

    core.clearFaults();
    const second = await spawnMain(env);
    try {
      await second.until((lines) =>
        lines.some((l) =>
          l.msg === "removed what a write cut off by a stopped instance had created"
        )
      );
      const line = second.lines.find((l) =>
        l.msg === "removed what a write cut off by a stopped instance had created"
      );
      assert.ok(line, "the start says what it removed");
      assert.equal(line.route, "/api/lore");
      assert.deepEqual(titled(), []);
      assert.deepEqual((line.noteIds as string[]).length, 1);
      assert.ok(!existsSync(`${dataDir}/writes`), "the record and its folder are gone");
      assert.ok(!JSON.stringify(second.lines).includes(core.url), "no Core URL in the log");
    } finally {
      await second.close();
    }
  } finally {
    await core.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
