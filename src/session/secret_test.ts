import assert from "node:assert/strict";
import { join } from "node:path";
import { loadOrCreateSessionSecret, SESSION_SECRET_FILE, writeFileAtomic } from "./secret.ts";

const posix = Deno.build.os !== "windows";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "lpp-secret-test-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function list(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

const ENV_SECRET = "env-secret-0123456789-0123456789-abc";

Deno.test("secret: the environment wins and nothing is written", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, SESSION_SECRET_FILE), "f".repeat(64));
    const got = await loadOrCreateSessionSecret({ fromEnv: `  ${ENV_SECRET}\n`, dataDir: dir });
    assert.equal(got, ENV_SECRET);
    const empty = join(dir, "empty");
    await loadOrCreateSessionSecret({ fromEnv: ENV_SECRET, dataDir: empty });
    await assert.rejects(Deno.stat(empty), Deno.errors.NotFound);
  });
});

Deno.test("secret: a short environment value is an error that does not echo it", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      loadOrCreateSessionSecret({ fromEnv: "short-secret", dataDir: dir }),
      (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.match(e.message, /SESSION_SECRET is 12 characters; at least 32/);
        assert.ok(!e.message.includes("short-secret"));
        return true;
      },
    );
    assert.deepEqual(await list(dir), []);
  });
});

Deno.test("secret: created once (48 random bytes), mode 0600, no temp files left", async () => {
  await withTempDir(async (dir) => {
    const dataDir = join(dir, "nested", "data");
    const logs: string[] = [];
    const secret = await loadOrCreateSessionSecret({
      fromEnv: "   ",
      dataDir,
      log: (m) => logs.push(m),
    });
    assert.match(secret, /^[A-Za-z0-9_-]{64}$/);
    assert.equal(Uint8Array.fromBase64(secret, { alphabet: "base64url" }).length, 48);
    assert.deepEqual(await list(dataDir), [SESSION_SECRET_FILE]);
    const path = join(dataDir, SESSION_SECRET_FILE);
    assert.equal(await Deno.readTextFile(path), secret);
    if (posix) {
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
      assert.equal((await Deno.stat(dataDir)).mode! & 0o777, 0o700);
    }
    assert.equal(logs.length, 1);
    assert.match(logs[0], /created a new session secret/);
    assert.ok(!logs[0].includes(secret));

    // the next start reads the same secret and logs nothing
    const again = await loadOrCreateSessionSecret({ dataDir, log: (m) => logs.push(m) });
    assert.equal(again, secret);
    assert.equal(logs.length, 1);

    const other = await withNewDir((d) => loadOrCreateSessionSecret({ dataDir: d }));
    assert.notEqual(other, secret);
  });
});

async function withNewDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "lpp-secret-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("secret: concurrent first starts agree on one secret", async () => {
  await withTempDir(async (dir) => {
    const logs: string[] = [];
    const results = await Promise.all(
      Array.from(
        { length: 12 },
        () => loadOrCreateSessionSecret({ dataDir: dir, log: (m) => logs.push(m) }),
      ),
    );
    assert.equal(new Set(results).size, 1);
    assert.equal(logs.length, 1); // one creator; the others read its file
    assert.equal(await Deno.readTextFile(join(dir, SESSION_SECRET_FILE)), results[0]);
    assert.deepEqual(await list(dir), [SESSION_SECRET_FILE]);
  });
});

Deno.test("secret: an operator-written file is used, trailing newline and all", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, SESSION_SECRET_FILE);
    await Deno.writeTextFile(path, ENV_SECRET + "\n", { mode: 0o600 });
    assert.equal(await loadOrCreateSessionSecret({ dataDir: dir }), ENV_SECRET);
  });
});

Deno.test("secret: a corrupt file is an error and is left untouched", async () => {
  const cases: [string, Uint8Array, RegExp][] = [
    ["empty", new Uint8Array(0), /0 characters, at least 32/],
    ["short", new TextEncoder().encode("tooshort\n"), /8 characters, at least 32/],
    ["binary", new Uint8Array([0xff, 0xfe, ...new Uint8Array(40).fill(0x41)]), /not UTF-8/],
    ["control", new TextEncoder().encode("a".repeat(20) + "\0" + "b".repeat(20)), /control/],
  ];
  for (const [label, bytes, why] of cases) {
    await withTempDir(async (dir) => {
      const path = join(dir, SESSION_SECRET_FILE);
      await Deno.writeFile(path, bytes, { mode: 0o600 });
      await assert.rejects(loadOrCreateSessionSecret({ dataDir: dir }), (e: unknown) => {
        assert.ok(e instanceof Error, label);
        assert.match(e.message, why, label);
        assert.match(e.message, /is corrupt/, label);
        assert.match(e.message, /not replaced/, label);
        assert.ok(e.message.includes(path), label);
        return true;
      });
      assert.deepEqual(await Deno.readFile(path), bytes, label);
      assert.deepEqual(await list(dir), [SESSION_SECRET_FILE], label);
    });
  }
});

Deno.test("secret: an unreadable path (a directory) is a clear error", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, SESSION_SECRET_FILE));
    await assert.rejects(
      loadOrCreateSessionSecret({ dataDir: dir }),
      /cannot read session secret file/,
    );
  });
});

Deno.test({
  name: "secret: a file readable by others is used but logged",
  ignore: !posix,
  fn: async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, SESSION_SECRET_FILE);
      await Deno.writeTextFile(path, ENV_SECRET);
      await Deno.chmod(path, 0o644);
      const logs: string[] = [];
      assert.equal(
        await loadOrCreateSessionSecret({ dataDir: dir, log: (m) => logs.push(m) }),
        ENV_SECRET,
      );
      assert.equal(logs.length, 1);
      assert.match(logs[0], /readable by other users/);
      assert.ok(!logs[0].includes(ENV_SECRET));
    });
  },
});

Deno.test("writeFileAtomic: writes, replaces, default mode 0600, no temp files", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "sub", "portal.json");
    await writeFileAtomic(path, '{"v":1}');
    assert.equal(await Deno.readTextFile(path), '{"v":1}');
    await writeFileAtomic(path, new TextEncoder().encode('{"v":2}'));
    assert.equal(await Deno.readTextFile(path), '{"v":2}');
    if (posix) assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.deepEqual(await list(join(dir, "sub")), ["portal.json"]);
  });
});

Deno.test({
  name: "writeFileAtomic: the requested mode is set exactly",
  ignore: !posix,
  fn: async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, "f");
      await writeFileAtomic(path, "x", 0o640);
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o640);
      // replacing a 0644 file does not inherit its mode
      await Deno.chmod(path, 0o644);
      await writeFileAtomic(path, "y");
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    });
  },
});

Deno.test({
  name: "writeFileAtomic: replaces a planted symlink instead of writing through it",
  ignore: !posix,
  fn: async () => {
    await withTempDir(async (dir) => {
      const victim = join(dir, "victim");
      await Deno.writeTextFile(victim, "original");
      const path = join(dir, "config");
      await Deno.symlink(victim, path);
      await writeFileAtomic(path, "new");
      assert.equal(await Deno.readTextFile(victim), "original");
      assert.equal((await Deno.lstat(path)).isFile, true);
      assert.equal(await Deno.readTextFile(path), "new");
    });
  },
});

Deno.test("writeFileAtomic: a failed rename removes the temp file", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "occupied");
    await Deno.mkdir(path);
    await Deno.writeTextFile(join(path, "inside"), "keep");
    await assert.rejects(writeFileAtomic(path, "data"));
    assert.deepEqual(await list(dir), ["occupied"]);
    assert.equal(await Deno.readTextFile(join(path, "inside")), "keep");
  });
});
