/** `runlater jobs get|scan|count|retry|delete`: look up and operate on jobs (JobService). */
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Job } from "@runlater/sdk/gen/job_pb.js";
import {
  CountJobsResponseSchema,
  DeleteJobsResponseSchema,
  GetJobsResponseSchema,
  RetryFailedJobsResponseSchema,
  ScanJobsResponseSchema,
} from "@runlater/sdk/gen/job_service_pb.js";
import type { Command } from "commander";
import { addJsonOption, type ClientContext, clientContext } from "./client.js";
import { ExitStatus } from "./exits.js";
import type { CliIo } from "./io.js";
import {
  addBodyRegexFlag,
  addFilterFlags,
  addPriorityFlag,
  addStateFlag,
  type FilterFlags,
  filterFields,
} from "./job-filters.js";
import { printJson } from "./json.js";
import { bodyBlock, bodyCell, fields, formatTime, keyText, stateName, table } from "./output.js";
import { parseTimeMs, positiveInt, uint32 } from "./parse.js";

/** The server looks up at most this many ids per GetJobs call (limits.getJobsMax). */
export const GET_BATCH = 1000;

const BODY_HELP = "include job bodies (shown as UTF-8 text when they are, else as base64; the output says which)";

export function registerJobs(program: Command, io: CliIo): void {
  const jobs = program.command("jobs").description("look up, scan, count, retry and delete jobs");

  addJsonOption(
    jobs
      .command("get")
      .description("show jobs by id; exits 1 if any id names no job (never existed, deleted or garbage-collected)")
      .argument("<id...>", "job ids as enqueue printed them")
      .option("--body", BODY_HELP),
  )
    .addHelpText("after", "\nExample:\n  $ runlater jobs get emails.0.mws4dn7f2fce4200001 --body")
    .action(async (ids: string[], opts: { body?: boolean }, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = create(GetJobsResponseSchema);
      for (let at = 0; at < ids.length; at += GET_BATCH) {
        const page = await ctx.clients.jobs.getJobs({
          jobIds: ids.slice(at, at + GET_BATCH),
          includeBody: opts.body === true,
        });
        res.jobs.push(...page.jobs);
        res.notFoundJobIds.push(...page.notFoundJobIds);
      }
      if (ctx.json) printJson(io, GetJobsResponseSchema, res);
      else {
        io.out(res.jobs.map((j) => describeJob(j, opts.body === true)).join("\n"));
        for (const id of res.notFoundJobIds) io.err(`not found: ${id}\n`);
      }
      if (res.notFoundJobIds.length > 0) throw new ExitStatus(1);
    });

  addJsonOption(
    addFilterFlags(
      jobs
        .command("scan")
        .description("list a queue's jobs matching the filters, newest run_after first, a page at a time")
        .argument("<queue>", "queue name"),
    )
      .option("--limit <n>", "page size (default 100, at most 1000)", positiveInt)
      .option("--page-token <token>", "continue from a previous page (the token scan printed)")
      .option("--all", "follow every page to the end")
      .option("--body", BODY_HELP),
  )
    .addHelpText("after", "\nExample:\n  $ runlater jobs scan emails --state failed --body-regex 'example\\.com' --all")
    .action(
      async (
        queue: string,
        opts: FilterFlags & { limit?: number; pageToken?: string; all?: boolean; body?: boolean },
        cmd: Command,
      ) => {
        const ctx = clientContext(io, cmd);
        const includeBody = opts.body === true;
        const res = create(ScanJobsResponseSchema);
        let pageToken = opts.pageToken ?? "";
        do {
          const page = await ctx.clients.jobs.scanJobs({
            queue,
            ...filterFields(opts),
            limit: opts.limit ?? 0,
            pageToken,
            includeBody,
          });
          res.jobs.push(...page.jobs);
          res.nextPageToken = pageToken = page.nextPageToken;
        } while (opts.all && pageToken !== "");
        if (ctx.json) return printJson(io, ScanJobsResponseSchema, res);
        printJobTable(ctx, res.jobs, includeBody);
        // On stderr so that stdout stays a clean table for pipes.
        if (res.nextPageToken !== "") io.err(`more jobs: add --page-token ${res.nextPageToken} (or --all)\n`);
      },
    );

  addJsonOption(
    addFilterFlags(
      jobs.command("count").description("count a queue's jobs matching the filters").argument("<queue>", "queue name"),
    ),
  )
    .addHelpText("after", "\nExample:\n  $ runlater jobs count emails --state pending --due")
    .action(async (queue: string, opts: FilterFlags, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.jobs.countJobs({ queue, ...filterFields(opts) });
      if (ctx.json) return printJson(io, CountJobsResponseSchema, res);
      io.out(`${res.count}\n`);
    });

  addJsonOption(
    addPriorityFlag(
      jobs
        .command("retry")
        .description("move FAILED jobs back to PENDING with fresh attempts, oldest failures first")
        .argument("<queue>", "queue name"),
    )
      .option("--attempts <n>", "attempts the retried jobs get (default: the queue's default-attempts)", uint32)
      .option(
        "--run-after <time>",
        "when they become due: RFC 3339 or a delay from now (10s, 5m); default now",
        (v: string) => parseTimeMs(v),
      )
      .option("--limit <n>", "at most this many jobs (default 1000, at most 100000)", positiveInt),
  )
    .addHelpText("after", "\nExample:\n  $ runlater jobs retry emails --attempts 3 --run-after 5m")
    .action(
      async (
        queue: string,
        opts: { priority?: number; attempts?: number; runAfter?: number; limit?: number },
        cmd: Command,
      ) => {
        const ctx = clientContext(io, cmd);
        const res = await ctx.clients.jobs.retryFailedJobs({
          queue,
          priority: opts.priority ?? 0,
          attemptsAllowed: opts.attempts ?? 0,
          runAfter: opts.runAfter === undefined ? undefined : timestampFromMs(opts.runAfter),
          limit: opts.limit ?? 0,
        });
        if (ctx.json) return printJson(io, RetryFailedJobsResponseSchema, res);
        io.out(`retried ${res.count} ${plural(res.count)} (now PENDING)\n`);
      },
    );

  addJsonOption(
    addBodyRegexFlag(
      addPriorityFlag(
        addStateFlag(
          jobs
            .command("delete")
            .description("delete a queue's jobs in one state (to delete a whole queue use `queue delete`)")
            .argument("<queue>", "queue name"),
          true,
        ),
      ),
    ).option("--limit <n>", "at most this many jobs (default 1000, at most 100000)", positiveInt),
  )
    .addHelpText("after", "\nExample:\n  $ runlater jobs delete emails --state failed --body-regex test")
    .action(async (queue: string, opts: FilterFlags & { limit?: number }, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.jobs.deleteJobs({
        queue,
        state: opts.state,
        priority: opts.priority ?? 0,
        bodyRegex: opts.bodyRegex ?? "",
        limit: opts.limit ?? 0,
      });
      if (ctx.json) return printJson(io, DeleteJobsResponseSchema, res);
      io.out(`deleted ${res.count} ${plural(res.count)}\n`);
    });
}

function plural(n: bigint): string {
  return n === 1n ? "job" : "jobs";
}

function printJobTable(ctx: ClientContext, jobs: Job[], includeBody: boolean): void {
  if (jobs.length === 0) {
    ctx.io.err("no jobs match\n");
    return;
  }
  // The ORDERING KEY column only when a job of the page has one: most queues use none.
  const keyed = jobs.some((j) => j.orderingKey !== "");
  const headers = [
    "JOB ID",
    "STATE",
    "PRIORITY",
    "RUN AFTER",
    "ATTEMPTS LEFT",
    "CREATED",
    ...(keyed ? ["ORDERING KEY"] : []),
    ...(includeBody ? ["BODY"] : []),
  ];
  const rows = jobs.map((j) => [
    j.jobId,
    stateName(j.state),
    String(j.priority),
    formatTime(j.runAfter),
    `${j.attemptsRemaining}/${j.attemptsAllowed}`,
    formatTime(j.createdAt),
    ...(keyed ? [j.orderingKey === "" ? "-" : keyText(j.orderingKey)] : []),
    ...(includeBody ? [bodyCell(j.body)] : []),
  ]);
  ctx.io.out(table(headers, rows));
}

/** Every field of one job; the body last since it may span lines. */
export function describeJob(j: Job, includeBody: boolean): string {
  const pairs: Array<[string, string]> = [
    ["job_id", j.jobId],
    ["queue", j.queue],
    ["state", stateName(j.state)],
    ["priority", String(j.priority)],
    ...(j.orderingKey !== "" ? [["ordering_key", keyText(j.orderingKey)] as [string, string]] : []),
    ["run_after", formatTime(j.runAfter)],
    ["attempts", `${j.attemptsRemaining} of ${j.attemptsAllowed} remaining`],
    ["created_at", formatTime(j.createdAt)],
    ["updated_at", formatTime(j.updatedAt)],
  ];
  if (j.claimExpiresAt) pairs.push(["claim_expires_at", formatTime(j.claimExpiresAt)]);
  if (j.finishedAt) pairs.push(["finished_at", formatTime(j.finishedAt)]);
  if (j.customStatus !== "") pairs.push(["custom_status", j.customStatus]);
  return fields(pairs) + (includeBody ? bodyBlock(j.body) : "");
}
