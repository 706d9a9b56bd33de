/**
 * Retention GC on the SQLite store, at scale: a server (in this process, GC every second)
 * on a new SQLite file processes `--jobs` jobs (default 1,000,000) with a short succeeded
 * retention, the producer keeping at most `--backlog` jobs waiting, SDK Workers taking them.
 * Prints the file's size (database + WAL) and page counts as it goes and once GC has
 * collected everything: the file stays at the size of the jobs alive at once, not of every
 * job ever processed. Too slow for CI; the mechanism is tested in
 * server/test/store/sqlite-gc.test.ts. Figures belong in docs/benchmarks.md.
 *
 *   npx tsx test/bench/sqlite-gc.ts [--jobs 1000000] [--backlog 50000] [--retention-ms 2000] [--payload 200] [--dir DIR]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { createRunlaterClient, JobState, Worker } from "@runlater/sdk";
import { startServer } from "../../server/src/server.js";
import { openSqliteStore } from "../../server/src/store/sqlite/sqlite-store.js";

const { values: args } = parseArgs({
  options: {
    jobs: { type: "string", default: "1000000" },
    backlog: { type: "string", default: "50000" },
    "retention-ms": { type: "string", default: "2000" },
    payload: { type: "string", default: "200" },
    dir: { type: "string" },
  },
});
const jobs = Number(args.jobs);
const backlog = Number(args.backlog);
const retentionMs = Number(args["retention-ms"]);
const payload = new Uint8Array(Number(args.payload)).fill(120);
const dir = args.dir ?? mkdtempSync(join(tmpdir(), "runlater-gc-"));
const path = join(dir, "runlater.db");

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const size = (file: string) => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

/** The file as a reader sees it: bytes on disk (database + WAL), pages in use and free. */
function measure(): { file: number; wal: number; pages: number; free: number; pageSize: number } {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const one = (pragma: string) => Object.values(db.prepare(`PRAGMA ${pragma}`).get()!)[0] as number;
    return {
      file: size(path),
      wal: size(`${path}-wal`),
      pages: one("page_count"),
      free: one("freelist_count"),
      pageSize: one("page_size"),
    };
  } finally {
    db.close();
  }
}

const store = await openSqliteStore(`sqlite:${path}`);
const server = await startServer({ store, port: 0, gcIntervalMs: 1000 });
const client = createRunlaterClient(server.url, { httpVersion: "2" });
await client.createQueue("gc", { succeededRetentionMs: retentionMs });
let processed = 0;
const workers = [0, 1].map(
  () =>
    new Worker({
      client,
      queue: "gc",
      concurrency: 200,
      batchSize: 100,
      handler: async () => {
        processed++;
      },
    }),
);
for (const w of workers) w.start();

const started = Date.now();
let peak = measure();
const sampler = setInterval(() => {
  const m = measure();
  if (m.file + m.wal > peak.file + peak.wal) peak = m;
  console.log(
    `${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s: processed ${processed.toLocaleString("en-US")}, file ${mib(m.file)} + WAL ${mib(m.wal)}, pages ${m.pages} (free ${m.free})`,
  );
}, 5000);

let enqueued = 0;
while (enqueued < jobs) {
  if (enqueued - processed >= backlog) {
    await new Promise((r) => setTimeout(r, 20));
    continue;
  }
  const n = Math.min(1000, jobs - enqueued);
  await client.jobs.enqueue({ jobs: Array.from({ length: n }, () => ({ queue: "gc", body: payload })) });
  enqueued += n;
}
while (processed < jobs) await new Promise((r) => setTimeout(r, 50));
const processedMs = Date.now() - started;
await Promise.all(workers.map((w) => w.stop()));
// GC collects a job once its retention has passed, every second, a chunk of 1000 at a time.
const succeeded = async () => Number((await client.jobs.countJobs({ queue: "gc", state: JobState.SUCCEEDED })).count);
while ((await succeeded()) > 0) await new Promise((r) => setTimeout(r, 500));
const collectedMs = Date.now() - started;
clearInterval(sampler);
const end = measure();
console.log(
  `\njobs ${jobs.toLocaleString("en-US")} (payload ${payload.length} B, backlog ≤ ${backlog.toLocaleString("en-US")}, succeeded retention ${retentionMs} ms, GC every 1 s): ` +
    `processed in ${(processedMs / 1000).toFixed(0)} s (${Math.round((jobs / processedMs) * 1000).toLocaleString("en-US")} jobs/s), all collected after ${(collectedMs / 1000).toFixed(0)} s`,
);
console.log(
  `largest file seen: ${mib(peak.file)} + WAL ${mib(peak.wal)} (${peak.pages} pages of ${peak.pageSize} B, ${peak.free} free)`,
);
console.log(
  `after GC: file ${mib(end.file)} + WAL ${mib(end.wal)}, page_count ${end.pages}, freelist_count ${end.free} (${mib(end.free * end.pageSize)} free for reuse)`,
);
client.close();
await server.stop();
const closed = size(path);
console.log(`after close (last checkpoint): file ${mib(closed)}, WAL ${mib(size(`${path}-wal`))}`);
if (!args.dir) rmSync(dir, { recursive: true, force: true });
