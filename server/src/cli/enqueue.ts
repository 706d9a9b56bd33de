/** `runlater enqueue QUEUE [BODY]`: add jobs (JobService.Enqueue) and print their ids. */
import { readFile } from "node:fs/promises";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { JobSpec } from "@runlater/sdk/gen/job_pb.js";
import { JobSpecSchema } from "@runlater/sdk/gen/job_pb.js";
import { EnqueueResponseSchema } from "@runlater/sdk/gen/job_service_pb.js";
import type { Command } from "commander";
import { addJsonOption, clientContext } from "./client.js";
import { usageError } from "./exits.js";
import type { CliIo } from "./io.js";
import { printJson } from "./json.js";
import { parseTimeMs, positiveInt, uint32 } from "./parse.js";

/** The server takes at most this many jobs per Enqueue call (limits.enqueueBatchMax). */
export const ENQUEUE_BATCH = 1000;

interface EnqueueFlags {
  file?: string;
  priority?: number;
  runAfter?: number;
  attempts?: number;
  idempotencyKey?: string;
  orderingKey?: string;
  count: number;
  json?: boolean;
}

export function registerEnqueue(program: Command, io: CliIo): void {
  addJsonOption(
    program
      .command("enqueue")
      .description("add a job to a queue and print its id (one id per line)")
      .argument("<queue>", "queue name")
      .argument("[body]", "job body as text; - reads stdin; omitted: read stdin when it is piped")
      .option("--file <path>", "read the body from a file (bytes as they are)")
      .option("--priority <n>", "1 is the highest; default the queue's default (1)", positiveInt)
      .option(
        "--run-after <time>",
        "earliest run time: RFC 3339 (2026-05-01T12:00:00Z) or a delay from now (10s, 5m, 1h)",
        (v: string) => parseTimeMs(v),
      )
      .option("--attempts <n>", "attempts allowed in all (default: the queue's default-attempts)", uint32)
      .option(
        "--idempotency-key <key>",
        "a repeat enqueue with the same key returns the first job's id and adds nothing",
      )
      .option(
        "--ordering-key <key>",
        "jobs with the same key run one at a time, in enqueue order (ignored on FIFO queues)",
      )
      .option("--count <n>", `enqueue the same body n times (sent in batches of ${ENQUEUE_BATCH})`, positiveInt, 1),
  )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        '  $ runlater enqueue emails \'{"to":"a@example.com"}\'\n' +
        "  $ runlater enqueue emails --file job.bin --priority 2 --run-after 10m\n" +
        '  $ runlater enqueue payments \'{"op":"refund"}\' --ordering-key account-42\n' +
        "  $ echo hello | runlater enqueue emails --count 5000",
    )
    .action(async (queue: string, bodyArg: string | undefined, opts: EnqueueFlags, cmd: Command) => {
      if (opts.idempotencyKey !== undefined && opts.count > 1) {
        usageError(cmd, "--idempotency-key with --count above 1 would add one job and repeat its id; drop one of them");
      }
      const body = await readBody(io, cmd, bodyArg, opts.file);
      const spec = create(JobSpecSchema, {
        queue,
        body,
        priority: opts.priority ?? 0,
        runAfter: opts.runAfter === undefined ? undefined : timestampFromMs(opts.runAfter),
        attemptsAllowed: opts.attempts ?? 0,
        idempotencyKey: opts.idempotencyKey ?? "",
        orderingKey: opts.orderingKey ?? "",
      });
      const ctx = clientContext(io, cmd);
      const ids: string[] = [];
      for (let sent = 0; sent < opts.count; sent += ENQUEUE_BATCH) {
        const jobs: JobSpec[] = new Array(Math.min(ENQUEUE_BATCH, opts.count - sent)).fill(spec);
        const res = await ctx.clients.jobs.enqueue({ jobs });
        // Text mode prints each batch's ids at once, so if a later batch fails the ids of
        // the jobs already added are on stdout.
        if (ctx.json) ids.push(...res.jobIds);
        else io.out(res.jobIds.map((id) => `${id}\n`).join(""));
      }
      if (ctx.json) printJson(io, EnqueueResponseSchema, create(EnqueueResponseSchema, { jobIds: ids }));
    });
}

/** The body from exactly one source: the argument, --file, or stdin (`-` or piped). */
async function readBody(
  io: CliIo,
  cmd: Command,
  arg: string | undefined,
  file: string | undefined,
): Promise<Uint8Array> {
  if (arg !== undefined && file !== undefined)
    usageError(cmd, "give the body either as an argument or with --file, not both");
  if (file !== undefined) {
    try {
      return new Uint8Array(await readFile(file));
    } catch (err) {
      // A missing or unreadable file is a failure (exit 1), not a misuse of the flags.
      throw new Error(`cannot read --file: ${(err as Error).message}`);
    }
  }
  if (arg === "-") return io.readStdin();
  if (arg !== undefined) return new TextEncoder().encode(arg);
  if (io.stdinIsTTY) usageError(cmd, "no body: give it as an argument, with --file PATH, or pipe it on stdin");
  return io.readStdin();
}
