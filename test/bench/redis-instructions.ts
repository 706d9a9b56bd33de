/**
 * Instructions Redis executes per job for each hot store operation (insert, claim, start,
 * complete), counted by valgrind's callgrind: unlike time, the count barely moves between
 * runs, so a change of a few percent in the scripts shows (this machine's timings swing by
 * a third from one minute to the next). Starts its own redis-server under callgrind on a
 * free port (slow: ~50× slower than native, so the counts are small), runs each operation
 * over the whole batch in turn and reads the counters between them.
 *
 *   npx tsx test/bench/redis-instructions.ts [--jobs 10000] [--claim 250] [--batch 100] [--keep DIR]
 *
 * --keep DIR leaves callgrind's files there, one per phase in order (callgrind.out.2 is the
 * insert, .4 the claim, .6 the start, .8 the complete), for callgrind_annotate.
 *
 * Needs valgrind (apt install valgrind) and redis-server on PATH. Compare two versions of
 * the code by running it in each checkout (the counts include Lua, the commands, argument
 * parsing and reply writing: everything Redis does for the calls).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { newJobId } from "../../server/src/domain/job-id.js";
import { resolveQueueConfig } from "../../server/src/domain/queue-config.js";
import { openRedisStore } from "../../server/src/store/redis/redis-store.js";

const { values: args } = parseArgs({
  options: {
    jobs: { type: "string", default: "10000" },
    claim: { type: "string", default: "250" },
    batch: { type: "string", default: "100" },
    keep: { type: "string" },
  },
});
const jobs = Number(args.jobs);
const claimSize = Number(args.claim);
const batch = Number(args.batch);

const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as { port: number };
    probe.close(() => resolve(port));
  });
});
const dir = args.keep ?? mkdtempSync(join(tmpdir(), "redis-instructions-"));
const out = join(dir, "callgrind.out");
const redis = spawn(
  "valgrind",
  [
    "--tool=callgrind",
    `--callgrind-out-file=${out}`,
    "redis-server",
    "--port",
    String(port),
    "--save",
    "",
    "--appendonly",
    "no",
  ],
  { stdio: "ignore" },
);
const url = `redis://127.0.0.1:${port}`;
// valgrind takes a few seconds to start Redis: wait until it answers.
for (let i = 0; !(await answers(port)); i++) {
  if (i > 150) throw new Error("redis-server under valgrind did not start");
  await new Promise((r) => setTimeout(r, 200));
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Instructions since the last read: callgrind dumps (and zeroes) its counters to a new file. */
let dumps = 0;
function instructionsSinceLastRead(): number {
  execFileSync("callgrind_control", ["--dump", String(redis.pid)], { stdio: "ignore" });
  dumps++;
  const file = join(dir, `callgrind.out.${dumps}`);
  const summary = /^summary: (\d+)$/m.exec(readFileSync(file, "utf8"));
  if (!summary) throw new Error(`no summary in ${file} (${readdirSync(dir).join(", ")})`);
  return Number(summary[1]);
}

try {
  const store = await openRedisStore({ urls: [url], prefix: "instr" });
  const q = "instr";
  const now = Date.now();
  await store.queueCreate({ name: q, config: resolveQueueConfig({}), now });
  const lease = (await store.leaseAcquire({ queue: q, partition: 0, owner: "o", ttlMs: 3_600_000, now }))!;
  const body = new Uint8Array(200);
  const counts = new Map<string, number>();
  const phase = async (name: string, run: () => Promise<void>) => {
    instructionsSinceLastRead();
    await run();
    counts.set(name, instructionsSinceLastRead());
  };

  await phase("insert", async () => {
    for (let i = 0; i < jobs; i += 1000) {
      const n = Math.min(1000, jobs - i);
      const specs = Array.from({ length: n }, () => ({
        id: newJobId(q, 0, now),
        queue: q,
        partition: 0,
        priority: 1,
        body,
        runAfter: now,
        attemptsAllowed: 3,
        customStatus: "",
        createdAt: now,
        idempotencyKey: "",
        orderingKey: "",
      }));
      await store.jobInsertMany({ jobs: specs, now });
    }
  });
  const claimed: string[] = [];
  await phase("claim", async () => {
    for (;;) {
      const got = await store.jobClaimMany({ queue: q, partition: 0, epoch: lease.epoch, limit: claimSize, now });
      if (got.length === 0) break;
      for (const job of got) claimed.push(job.id);
    }
  });
  const handOuts: Array<{ token: string; ids: string[] }> = [];
  await phase("start", async () => {
    for (let i = 0; i < claimed.length; i += batch) {
      const token = `tok${i}`;
      const plans = claimed
        .slice(i, i + batch)
        .map((id) => ({ id, claimToken: token, claimExpiresAt: now + 3_600_000, retryDelayMs: 1000 }));
      handOuts.push({
        token,
        ids: await store.jobStartMany({ queue: q, partition: 0, epoch: lease.epoch, plans, now }),
      });
    }
  });
  await phase("complete", async () => {
    for (const { token, ids } of handOuts)
      await store.jobCompleteMany({ items: ids.map((id) => ({ id, claimToken: token, customStatus: "" })), now });
  });
  await store.close();
  console.log(
    `Redis instructions per job (callgrind), ${jobs} jobs: claims of ${claimSize}, hand-outs and ACKs of ${batch}`,
  );
  for (const [name, n] of counts)
    console.log(
      `${name.padEnd(9)} ${Math.round(n / jobs)
        .toLocaleString("en-US")
        .padStart(8)}`,
    );
} finally {
  redis.kill("SIGTERM");
  await new Promise((r) => redis.once("exit", r));
  if (!args.keep) rmSync(dir, { recursive: true, force: true });
}
