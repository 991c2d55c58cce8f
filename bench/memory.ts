/**
 * Resident memory of a process under test, read from Linux's `/proc/<pid>/status`: `VmRSS` now
 * and `VmHWM` (the peak since start, or since {@linkcode resetPeak}). Deno only opens `/proc/<pid>`
 * files with all permissions (`-A`). Where `/proc` is missing every reading is `null`.
 *
 * @module
 */

/** One reading, in bytes. */
export interface MemoryReading {
  /** `VmRSS`: resident now. */
  rss: number;
  /** `VmHWM`: the highest resident size since start or the last {@linkcode resetPeak}. */
  hwm: number;
}

/**
 * The `VmRSS` and `VmHWM` lines of a `/proc/<pid>/status` text, in bytes (null when absent).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   parseProcStatus("VmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n"),
 *   { rss: 1048576, hwm: 2097152 },
 * );
 * ```
 */
export function parseProcStatus(status: string): MemoryReading | null {
  const kb = (field: string) =>
    Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1]);
  const rss = kb("VmRSS");
  const hwm = kb("VmHWM");
  return Number.isFinite(rss) && Number.isFinite(hwm) ? { rss: rss * 1024, hwm: hwm * 1024 } : null;
}

/**
 * The process's memory now, or null when it cannot be read (gone, no `/proc`, no permission).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const mine = readMemory(Deno.pid); // null where there is no /proc
 * if (mine) assert.ok(mine.rss > 0 && mine.hwm >= mine.rss);
 * ```
 */
export function readMemory(pid: number): MemoryReading | null {
  try {
    return parseProcStatus(Deno.readTextFileSync(`/proc/${pid}/status`));
  } catch {
    return null;
  }
}

/**
 * Resets the process's `VmHWM` to its current RSS (`/proc/<pid>/clear_refs`, value 5), so the next
 * reading's peak covers only what came after. False when the kernel or permissions refuse.
 */
export function resetPeak(pid: number): boolean {
  try {
    Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** What {@linkcode sampleMemory} saw, in bytes (null when nothing could be read). */
export interface MemoryPeak {
  /** Highest sampled `VmRSS`. */
  sampled: number | null;
  /** `VmHWM` at the end: the true peak when the start could reset it. */
  hwm: number | null;
  /** Whether `VmHWM` was reset at the start (otherwise it is the peak since the process began). */
  hwmReset: boolean;
}

/**
 * Samples a process's `VmRSS` every `everyMs` (after resetting its `VmHWM`) until `stop()`, which
 * returns the highest sample and the final `VmHWM`. The kernel's `VmHWM` catches spikes between
 * samples; the samples show the peak where it cannot be reset.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const sampler = sampleMemory(Deno.pid, 10);
 * await new Promise((resolve) => setTimeout(resolve, 30)); // the work measured
 * const peak = sampler.stop(); // null readings where there is no /proc
 * if (peak.sampled !== null) assert.ok(peak.sampled > 0 && peak.hwm !== null);
 * ```
 */
export function sampleMemory(pid: number, everyMs = 50): { stop(): MemoryPeak } {
  const hwmReset = resetPeak(pid);
  let sampled: number | null = null;
  const sample = () => {
    const m = readMemory(pid);
    if (m) sampled = Math.max(sampled ?? 0, m.rss);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { sampled, hwm: readMemory(pid)?.hwm ?? null, hwmReset };
    },
  };
}

/**
 * The highest resident size a sampler saw, in bytes: the kernel's `VmHWM` when it could be reset
 * (it catches spikes between samples), the highest sample otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(peakBytes({ sampled: 100, hwm: 120, hwmReset: true }), 120);
 * ```
 */
export function peakBytes(p: MemoryPeak): number | null {
  return p.hwmReset ? p.hwm : p.sampled;
}

/**
 * Bytes as MiB with one decimal ("—" for null).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(mib(3 * 1024 * 1024), "3.0");
 * ```
 */
export function mib(bytes: number | null): string {
  return bytes === null ? "—" : (bytes / 1024 / 1024).toFixed(1);
}
