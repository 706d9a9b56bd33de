/**
 * `runlater schedule create|update|delete|list|show|pause|resume`: cron schedules that
 * start workflow instances or enqueue plain jobs (ScheduleService, docs/workflows.md#schedules).
 */
import { clone, create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import {
  CatchUp,
  CreateScheduleResponseSchema,
  DeleteScheduleResponseSchema,
  FireOutcome,
  GetScheduleResponseSchema,
  ListSchedulesResponseSchema,
  OverlapPolicy,
  PauseScheduleResponseSchema,
  ResumeScheduleResponseSchema,
  type Schedule,
  ScheduleJobTargetSchema,
  ScheduleSchema,
  ScheduleWorkflowTargetSchema,
  UpdateScheduleResponseSchema,
} from "@runlater/sdk/gen/schedule_service_pb.js";
import type { ExternalEvent } from "@runlater/sdk/gen/workflow_service_pb.js";
import { type Command, Option } from "commander";
import { addJsonOption, clientContext } from "./client.js";
import { usageError } from "./exits.js";
import type { CliIo } from "./io.js";
import { printJson } from "./json.js";
import { bodyCell, fields, formatDuration, formatTime, table, yesNo } from "./output.js";
import { parseDurationMs, positiveInt, uint32 } from "./parse.js";
import { eventFlag } from "./workflow.js";

interface ScheduleFlags {
  cron?: string;
  timeZone?: string;
  workflow?: string;
  event?: ExternalEvent[];
  keepOpen?: boolean;
  queue?: string;
  body?: string;
  priority?: number;
  attempts?: number;
  overlap?: "skip" | "allow" | "cancel_previous";
  catchUp?: "none" | "latest";
  catchUpWindow?: number;
  paused?: boolean;
  json?: boolean;
}

const OVERLAPS = {
  skip: OverlapPolicy.SKIP,
  allow: OverlapPolicy.ALLOW,
  cancel_previous: OverlapPolicy.CANCEL_PREVIOUS,
};

function addDefinitionFlags(cmd: Command): Command {
  return cmd
    .option("--cron <expr>", "5 fields (minute hour day month weekday), 6 (seconds first) or @daily, @hourly, …")
    .option("--time-zone <tz>", "IANA time zone the cron is read in (default UTC), e.g. Europe/Berlin")
    .option("--workflow <name>", "each fire starts an instance of this workflow")
    .option(
      "--event <input=payload>",
      "with --workflow: post to an external input of each instance (repeatable)",
      eventFlag,
    )
    .option("--keep-open", "with --workflow: start each instance keep_open")
    .option("--queue <queue>", "each fire enqueues a plain job on this queue")
    .option("--body <text>", "with --queue: the job's body")
    .option("--priority <n>", "with --queue: the job's priority (default 1)", positiveInt)
    .option("--attempts <n>", "with --queue: the job's attempts (default: the queue's)", uint32)
    .addOption(
      new Option("--overlap <policy>", "while the previous fire's run still runs (default skip)").choices(
        Object.keys(OVERLAPS),
      ),
    )
    .addOption(
      new Option("--catch-up <rule>", "missed times after downtime (default none)").choices(["none", "latest"]),
    )
    .option(
      "--catch-up-window <duration>",
      "with --catch-up latest: how old a missed time may be (default 1h)",
      parseDurationMs,
    );
}

/** The definition: `base` (the current schedule, for update) with the flags given applied. */
function scheduleFromFlags(cmd: Command, name: string, o: ScheduleFlags, base?: Schedule): Schedule {
  const s = base ? clone(ScheduleSchema, base) : create(ScheduleSchema, { name });
  if (o.workflow !== undefined && o.queue !== undefined) usageError(cmd, "give --workflow or --queue, not both");
  if (o.cron !== undefined) s.cron = o.cron;
  if (o.timeZone !== undefined) s.timeZone = o.timeZone;
  if (o.workflow !== undefined)
    s.target = { case: "workflow", value: create(ScheduleWorkflowTargetSchema, { workflow: o.workflow }) };
  if (o.queue !== undefined) s.target = { case: "job", value: create(ScheduleJobTargetSchema, { queue: o.queue }) };
  const t = s.target;
  const jobFlags = o.body !== undefined || o.priority !== undefined || o.attempts !== undefined;
  const workflowFlags = o.event !== undefined || o.keepOpen !== undefined;
  if (t.case === "workflow") {
    if (jobFlags) usageError(cmd, "--body, --priority and --attempts go with --queue (a job target)");
    if (o.event !== undefined) t.value.events = o.event;
    if (o.keepOpen !== undefined) t.value.keepOpen = o.keepOpen;
  } else if (t.case === "job") {
    if (workflowFlags) usageError(cmd, "--event and --keep-open go with --workflow (a workflow target)");
    if (o.body !== undefined) t.value.body = new TextEncoder().encode(o.body);
    if (o.priority !== undefined) t.value.priority = o.priority;
    if (o.attempts !== undefined) t.value.attemptsAllowed = o.attempts;
  } else {
    usageError(cmd, "say what each fire starts: --workflow NAME or --queue QUEUE");
  }
  if (o.overlap !== undefined) s.overlap = OVERLAPS[o.overlap];
  if (o.catchUp !== undefined) s.catchUp = o.catchUp === "latest" ? CatchUp.LATEST : CatchUp.NONE;
  if (o.catchUpWindow !== undefined) s.catchUpWindow = durationFromMs(o.catchUpWindow);
  if (s.catchUp !== CatchUp.LATEST) s.catchUpWindow = undefined;
  // The server-set fields are ignored on write; clear them so the request says only the definition.
  s.nextFireAt = undefined;
  s.upcoming = [];
  s.history = [];
  return s;
}

export function registerSchedule(program: Command, io: CliIo): void {
  const schedule = program
    .command("schedule")
    .description("cron schedules that start workflow instances or enqueue jobs");

  addJsonOption(
    addDefinitionFlags(
      schedule
        .command("create")
        .description("create a schedule (an existing one of that name is left as it is: use `schedule update`)")
        .argument("<name>", "schedule name: letters, digits, _ . - (1 to 64)"),
    ).option("--paused", "create it paused"),
  )
    .addHelpText(
      "after",
      "\nExamples:\n  $ runlater schedule create nightly_etl --cron '0 2 * * *' --time-zone Europe/Berlin --workflow etl --event files_ready=today\n  $ runlater schedule create ping --cron '*/30 * * * * *' --queue pings --body ping --overlap allow",
    )
    .action(async (name: string, opts: ScheduleFlags, cmd: Command) => {
      if (opts.cron === undefined) usageError(cmd, "--cron is required");
      const definition = scheduleFromFlags(cmd, name, opts);
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.schedules.createSchedule({ schedule: definition, paused: opts.paused === true });
      if (ctx.json) return printJson(io, CreateScheduleResponseSchema, res);
      io.out(res.created ? `created schedule ${name}\n` : `schedule ${name} already exists; nothing changed\n`);
      if (!res.created) io.err(`note: to change it use: runlater schedule update ${name} …\n`);
      io.out(describeSchedule(res.schedule!));
    });

  addJsonOption(
    addDefinitionFlags(
      schedule
        .command("update")
        .description("change a schedule: only the flags given change (a new --cron or --time-zone counts from now)")
        .argument("<name>", "schedule name"),
    ),
  )
    .addHelpText(
      "after",
      "\nExample:\n  $ runlater schedule update nightly_etl --cron '30 2 * * *' --overlap cancel_previous",
    )
    .action(async (name: string, opts: ScheduleFlags, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const current = await ctx.clients.schedules.getSchedule({ name, upcoming: 1 });
      const definition = scheduleFromFlags(cmd, name, opts, current.schedule);
      const res = await ctx.clients.schedules.updateSchedule({ schedule: definition });
      if (ctx.json) return printJson(io, UpdateScheduleResponseSchema, res);
      io.out(`updated schedule ${name}\n${describeSchedule(res.schedule!)}`);
    });

  addJsonOption(
    schedule
      .command("delete")
      .description("delete a schedule (what it started goes on); deleting a missing one is not an error")
      .argument("<name>", "schedule name"),
  )
    .addHelpText("after", "\nExample:\n  $ runlater schedule delete nightly_etl")
    .action(async (name: string, _opts: ScheduleFlags, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.schedules.deleteSchedule({ name });
      if (ctx.json) return printJson(io, DeleteScheduleResponseSchema, res);
      io.out(res.deleted ? `deleted schedule ${name}\n` : `schedule ${name} did not exist; nothing deleted\n`);
    });

  addJsonOption(schedule.command("list").description("list every schedule with its next fire time"))
    .addHelpText("after", "\nExample:\n  $ runlater schedule list")
    .action(async (_opts: ScheduleFlags, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = create(ListSchedulesResponseSchema);
      let pageToken = "";
      do {
        const page = await ctx.clients.schedules.listSchedules({ limit: 1000, pageToken });
        res.schedules.push(...page.schedules);
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      if (ctx.json) return printJson(io, ListSchedulesResponseSchema, res);
      if (res.schedules.length === 0) {
        io.err("no schedules yet; create one with: runlater schedule create NAME --cron … --workflow W\n");
        return;
      }
      io.out(
        table(
          ["NAME", "CRON", "TIME ZONE", "STARTS", "NEXT", "PAUSED", "FIRES", "LAST"],
          res.schedules.map((s) => [
            s.name,
            s.cron,
            s.timeZone,
            targetText(s),
            formatTime(s.nextFireAt),
            yesNo(s.paused),
            String(s.fires),
            s.history.length > 0 ? outcomeText(s.history[s.history.length - 1]!.outcome) : "-",
          ]),
        ),
      );
    });

  addJsonOption(
    schedule
      .command("show")
      .description("show a schedule, its next fire times and its latest fires")
      .argument("<name>", "schedule name")
      .option("--upcoming <n>", "how many next fire times to list (default 5, at most 100)", positiveInt),
  )
    .addHelpText("after", "\nExample:\n  $ runlater schedule show nightly_etl --upcoming 10")
    .action(async (name: string, opts: { upcoming?: number } & ScheduleFlags, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.schedules.getSchedule({ name, upcoming: opts.upcoming ?? 0 });
      if (ctx.json) return printJson(io, GetScheduleResponseSchema, res);
      io.out(describeSchedule(res.schedule!, true));
    });

  for (const [verb, help] of [
    ["pause", "stop a schedule from firing (the times that pass are not caught up)"],
    ["resume", "let a paused schedule fire again, from the first time after now"],
  ] as const) {
    addJsonOption(schedule.command(verb).description(help).argument("<name>", "schedule name"))
      .addHelpText("after", `\nExample:\n  $ runlater schedule ${verb} nightly_etl`)
      .action(async (name: string, _opts: ScheduleFlags, cmd: Command) => {
        const ctx = clientContext(io, cmd);
        if (verb === "pause") {
          const res = await ctx.clients.schedules.pauseSchedule({ name });
          if (ctx.json) return printJson(io, PauseScheduleResponseSchema, res);
          io.out(`paused schedule ${name}\n`);
        } else {
          const res = await ctx.clients.schedules.resumeSchedule({ name });
          if (ctx.json) return printJson(io, ResumeScheduleResponseSchema, res);
          io.out(`resumed schedule ${name}; next fire ${formatTime(res.schedule!.nextFireAt)}\n`);
        }
      });
  }
}

function targetText(s: Schedule): string {
  const t = s.target;
  if (t.case === "workflow") return `workflow ${t.value.workflow}`;
  if (t.case === "job") return `job on ${t.value.queue}`;
  return "-";
}

function outcomeText(outcome: FireOutcome): string {
  return (FireOutcome[outcome] ?? String(outcome)).toLowerCase();
}

/** The definition under the names of the flags that set it, then (with `history`) the next times and the latest fires. */
export function describeSchedule(s: Schedule, history = false): string {
  const t = s.target;
  const target: Array<[string, string]> =
    t.case === "workflow"
      ? [
          ["workflow", t.value.workflow],
          ["event", t.value.events.map((e) => `${e.input}=${new TextDecoder().decode(e.result)}`).join("\n") || "-"],
          ["keep-open", yesNo(t.value.keepOpen)],
        ]
      : t.case === "job"
        ? [
            ["queue", t.value.queue],
            ["body", bodyCell(t.value.body)],
            ["priority", String(t.value.priority || 1)],
            ["attempts", t.value.attemptsAllowed === 0 ? "the queue's default" : String(t.value.attemptsAllowed)],
          ]
        : [];
  const overlap = Object.entries(OVERLAPS).find(([, v]) => v === s.overlap)?.[0] ?? "skip";
  const text = fields([
    ["name", s.name],
    ["cron", s.cron],
    ["time-zone", s.timeZone],
    ...target,
    ["overlap", overlap],
    ["catch-up", s.catchUp === CatchUp.LATEST ? `latest (window ${formatDuration(s.catchUpWindow)})` : "none"],
    ["paused", yesNo(s.paused)],
    ["next fire", formatTime(s.nextFireAt)],
    ["fires", String(s.fires)],
    ["last started", s.lastStarted || "-"],
  ]);
  if (!history) return text;
  const upcoming = s.upcoming.length > 0 ? s.upcoming.map((u) => `  ${formatTime(u)}\n`).join("") : "  (none)\n";
  const fires =
    s.history.length === 0
      ? "  (none yet)\n"
      : table(
          ["AT", "OUTCOME", "WHAT"],
          s.history.map((f) => [
            formatTime(f.at),
            outcomeText(f.outcome),
            f.outcome === FireOutcome.MISSED
              ? `missed through ${formatTime(f.through)}`
              : f.error || [f.started, f.previous ? `(previous ${f.previous})` : ""].filter(Boolean).join(" "),
          ]),
        ).replace(/^(?=.)/gm, "  ");
  return `${text}upcoming:\n${upcoming}latest fires:\n${fires}`;
}
