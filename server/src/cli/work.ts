/**
 * `runlater work QUEUE -- COMMAND [ARGS…]`: a worker that runs a command once per job
 * (docs/cli.md#work). It is the TypeScript SDK's Worker (DequeueStream over HTTP/2, or
 * long-polling Dequeue with --poll; claims kept alive while a command runs; a graceful
 * stop), with work-command.ts running each job and work-outcome.ts reading its end.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { createRunlaterClient, DoNotRetry, RetryAfter, Worker, type WorkerJob } from "@runlater/sdk";
import type { Command } from "commander";
import { clientContext } from "./client.js";
import { usageError } from "./exits.js";
import type { CliIo } from "./io.js";
import { formatMs } from "./output.js";
import { parseDurationMs, positiveInt } from "./parse.js";
import { CommandRunner } from "./work-command.js";
import { EXIT_DO_NOT_RETRY, EXIT_RETRY_AFTER, workOutcome } from "./work-outcome.js";

/** The longest delay a Node timer takes (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface WorkFlags {
  concurrency: number;
  timeout: number;
  shutdownGrace: number;
  maxJobs?: number;
  poll?: boolean;
}

export function registerWork(program: Command, io: CliIo): void {
  program
    .command("work")
    .description("take jobs of a queue and run a command for each: the body on stdin, the job in RUNLATER_* variables")
    .argument("<queue>", "queue to take jobs from (it must exist)")
    .argument("[command...]", "the command and its arguments, after --")
    .option("--concurrency <n>", "commands running at once", positiveInt, 1)
    .option(
      "--timeout <duration>",
      "longest run of one command: then its process group is killed and the attempt fails (0: no limit)",
      parseDurationMs,
      30 * 60_000,
    )
    .option(
      "--shutdown-grace <duration>",
      "on SIGTERM or SIGINT, how long running commands may finish before they are killed and their jobs handed back",
      parseDurationMs,
      30_000,
    )
    .option(
      "--max-jobs <n>",
      "stop, as on SIGTERM, once this many jobs have finished (jobs running then still finish)",
      positiveInt,
    )
    .option(
      "--poll",
      "long-poll Dequeue over HTTP/1.1 instead of one DequeueStream over HTTP/2 (for proxies without HTTP/2)",
    )
    .addHelpText(
      "after",
      `
Exit codes of the command:
  0                   success; its first line on stdout is added to the job's custom status
  ${EXIT_RETRY_AFTER}                  retry after the delay on its first line on stdout (30s, 5m, 1h30m)
  ${EXIT_DO_NOT_RETRY}                  failed for good: not retried
  anything else       failed attempt, retried by the queue's retry policy
A failure's custom status ends with the last lines of the command's stderr.

Variables: RUNLATER_JOB_ID, RUNLATER_QUEUE, RUNLATER_ATTEMPT, RUNLATER_ATTEMPTS_ALLOWED,
RUNLATER_PRIORITY, RUNLATER_CUSTOM_STATUS, RUNLATER_CREATED_AT, RUNLATER_URL, and for a
workflow run RUNLATER_WORKFLOW, _VERSION, _INSTANCE_ID, _JOB, _RUN, _TRIGGERED_BY (docs/cli.md).

Examples:
  $ runlater work emails -- ./send-email.sh
  $ runlater work emails --max-jobs 1 -- sh -c 'echo "sent: $(cat)"'
  $ runlater work thumbnails --concurrency 4 --timeout 2m -- python3 thumbnail.py
  $ runlater work hooks -- sh -c 'curl -fsS --data-binary @- "$HOOK_URL" >/dev/null && echo delivered'`,
    )
    .action(async (queue: string, argv: string[], opts: WorkFlags, cmd: Command) => {
      if (argv.length === 0) usageError(cmd, "no command: give it after --, e.g. runlater work emails -- ./send.sh");
      for (const [flag, ms] of [
        ["--timeout", opts.timeout],
        ["--shutdown-grace", opts.shutdownGrace],
      ] as const)
        if (ms > MAX_TIMER_MS) usageError(cmd, `${flag} is at most ${formatMs(MAX_TIMER_MS)}`);
      if (!findExecutable(argv[0]!, io.env.PATH ?? ""))
        usageError(cmd, `${argv[0]}: command not found (or not executable)`);
      const ctx = clientContext(io, cmd);
      const url = ctx.url;
      const client = createRunlaterClient(url, {
        httpVersion: opts.poll ? "1.1" : "2",
        token: io.env.RUNLATER_TOKEN?.trim() || undefined,
      });
      try {
        await client.queues.getQueue({ name: queue }); // a missing queue: exit 1 with the server's not_found
        await work(io, client, queue, argv, opts, url);
      } finally {
        client.close();
      }
    });
}

async function work(
  io: CliIo,
  client: ReturnType<typeof createRunlaterClient>,
  queue: string,
  argv: string[],
  opts: WorkFlags,
  url: string,
): Promise<void> {
  const runner = new CommandRunner({
    argv,
    env: io.env,
    url,
    queue,
    timeoutMs: opts.timeout,
    out: io.out,
    err: io.err,
  });
  const say = (line: string) => io.err(`runlater work: ${line}\n`);
  let finished = 0;
  const handler = async (job: WorkerJob) => {
    const outcome = workOutcome(await runner.run(job), opts.timeout);
    if (job.signal.aborted) {
      // The worker no longer reports this job (it was handed back, or its claim lost).
      const why = job.signal.reason instanceof Error ? job.signal.reason.message : String(job.signal.reason);
      say(`job ${job.id}: command stopped: ${why}`);
      return;
    }
    if (opts.maxJobs !== undefined && ++finished === opts.maxJobs) {
      say(`${finished} job(s) finished (--max-jobs): stopping`);
      void worker.stop();
    }
    if (outcome.kind === "success") return outcome.customStatus;
    say(`job ${job.id} (attempt ${job.attempt} of ${job.attemptsAllowed}): ${outcome.customStatus}`);
    if (outcome.kind === "retry-after") throw new RetryAfter(outcome.delayMs, outcome.customStatus);
    if (outcome.kind === "do-not-retry") throw new DoNotRetry(outcome.customStatus);
    throw new Error(outcome.customStatus);
  };
  const worker = new Worker({
    client,
    queue,
    handler,
    concurrency: opts.concurrency,
    dequeueMode: opts.poll ? "poll" : "stream",
    shutdownGraceMs: opts.shutdownGrace,
    onError: (err, { op, jobId }) => {
      if (op === "handler") return; // said above, with the job's attempt
      say(`${op}${jobId ? ` of job ${jobId}` : ""}: ${err instanceof Error ? err.message : String(err)}`);
    },
  });

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      say(
        `${signal}: stopping; ${runner.active} running command(s) get up to ${formatMs(opts.shutdownGrace)} to finish (${signal} again kills them now)`,
      );
      void worker.stop();
      return;
    }
    // A second signal: no more waiting. Their jobs are retried once their claims expire.
    say(`${signal} again: killing ${runner.active} running command(s)`);
    runner.killAll();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  say(`working on queue ${queue}, ${opts.concurrency} command(s) at a time: ${argv.join(" ")}`);
  try {
    await worker.run();
    // Commands the worker gave up on (grace over) are being killed: wait for them too.
    await runner.settled();
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
  say("stopped");
}

/** Whether `name` runs: a path to an executable file, or a name found on PATH. */
function findExecutable(name: string, path: string): boolean {
  const candidates = name.includes("/") ? [name] : path.split(delimiter).map((dir) => join(dir || ".", name));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}
