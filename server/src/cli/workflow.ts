/**
 * `runlater workflow apply|start|show|list|instances|cancel|close|rerun|disable|enable`:
 * workflows and their instances (WorkflowService, docs/workflows.md).
 */
import { readFileSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import {
  ApplyWorkflowResponseSchema,
  type ExternalEvent,
  ExternalEventSchema,
  GetInstanceResponseSchema,
  type Instance,
  InstanceState,
  ListInstancesResponseSchema,
  ListWorkflowsResponseSchema,
  StartInstanceResponseSchema,
} from "@runlater/sdk/gen/workflow_service_pb.js";
import { type Command, InvalidArgumentError } from "commander";
import { addJsonOption, type ClientContext, clientContext } from "./client.js";
import { usageError } from "./exits.js";
import type { CliIo } from "./io.js";
import { printJson } from "./json.js";
import { formatTime, table } from "./output.js";
import { positiveInt } from "./parse.js";
import { parseWorkflowFile, WorkflowFileError } from "./workflow-file.js";
import { instanceStateName, instanceTree } from "./workflow-tree.js";

type JsonFlag = { json?: boolean };

/** `--event input=payload` (repeatable): the payload is the event's result, as UTF-8 text. */
export function eventFlag(value: string, previous: ExternalEvent[] = []): ExternalEvent[] {
  const at = value.indexOf("=");
  const input = at < 0 ? value : value.slice(0, at);
  if (input === "") throw new InvalidArgumentError(`"${value}" names no input: use input=payload`);
  const result = new TextEncoder().encode(at < 0 ? "" : value.slice(at + 1));
  return [...previous, create(ExternalEventSchema, { input, result })];
}

const STATES: Record<string, InstanceState> = {
  running: InstanceState.RUNNING,
  succeeded: InstanceState.SUCCEEDED,
  failed: InstanceState.FAILED,
  aborted: InstanceState.ABORTED,
  cancelled: InstanceState.CANCELLED,
};

function instanceState(value: string): InstanceState {
  const state = STATES[value.toLowerCase()];
  if (state === undefined)
    throw new InvalidArgumentError(`"${value}" is not an instance state: use ${Object.keys(STATES).join(", ")}`);
  return state;
}

export function registerWorkflow(program: Command, io: CliIo): void {
  const workflow = program.command("workflow").description("define workflows, start and steer their instances");

  addJsonOption(
    workflow
      .command("apply")
      .description("define a workflow from a YAML file, or change it (a changed definition becomes a new version)")
      .argument("<file>", "the definition file (docs/cli.md#workflow-apply-file); - reads standard input"),
  )
    .addHelpText("after", "\nExample:\n  $ runlater workflow apply etl.yaml")
    .action(async (file: string, _opts: JsonFlag, cmd: Command) => {
      const text = file === "-" ? new TextDecoder().decode(await io.readStdin()) : readText(cmd, file);
      let definition: ReturnType<typeof parseWorkflowFile>;
      try {
        definition = parseWorkflowFile(text);
      } catch (err) {
        if (err instanceof WorkflowFileError) usageError(cmd, `${file}: ${err.message}`);
        throw err;
      }
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.workflows.applyWorkflow({ workflow: definition });
      if (ctx.json) return printJson(io, ApplyWorkflowResponseSchema, res);
      const w = res.workflow!;
      io.out(
        res.created
          ? `applied workflow ${w.name}: version ${w.version} (${w.jobs.length} jobs)\n`
          : `workflow ${w.name} is unchanged at version ${w.version}\n`,
      );
    });

  addJsonOption(
    workflow
      .command("start")
      .description("start an instance of a workflow's latest version")
      .argument("<name>", "the workflow")
      .option("--event <input=payload>", "post an event to an external input at start (repeatable)", eventFlag)
      .option("--keep-open", "do not end when nothing is runnable or running; end on `workflow close`"),
  )
    .addHelpText("after", "\nExample:\n  $ runlater workflow start etl --event files_ready=s3://bucket/2030-01-01")
    .action(async (name: string, opts: { event?: ExternalEvent[]; keepOpen?: boolean } & JsonFlag, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.workflows.startInstance({
        workflow: name,
        events: opts.event ?? [],
        keepOpen: opts.keepOpen === true,
      });
      if (ctx.json) return printJson(io, StartInstanceResponseSchema, res);
      io.out(`${res.instance!.instanceId}\n`);
    });

  addJsonOption(
    workflow
      .command("show")
      .description("show an instance as a tree of its jobs: state, run count, last outcome")
      .argument("<instance>", "the instance id"),
  )
    .addHelpText("after", "\nExample:\n  $ runlater workflow show wf_mq1a2b3c4d5e6f7a8")
    .action(async (id: string, _opts: JsonFlag, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.workflows.getInstance({ instanceId: id });
      if (ctx.json) return printJson(io, GetInstanceResponseSchema, res);
      const instance = res.instance!;
      const def = await ctx.clients.workflows.getWorkflow({ name: instance.workflow, version: instance.version });
      io.out(instanceTree(instance, def.workflow!));
    });

  addJsonOption(workflow.command("list").description("list every workflow's latest version"))
    .addHelpText("after", "\nExample:\n  $ runlater workflow list")
    .action(async (_opts: JsonFlag, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.workflows.listWorkflows({});
      if (ctx.json) return printJson(io, ListWorkflowsResponseSchema, res);
      if (res.workflows.length === 0) {
        io.err("no workflows yet; define one with: runlater workflow apply FILE.yaml\n");
        return;
      }
      io.out(
        table(
          ["NAME", "VERSION", "JOBS", "APPLIED"],
          res.workflows.map((w) => [w.name, String(w.version), String(w.jobs.length), formatTime(w.createdAt)]),
        ),
      );
    });

  addJsonOption(
    workflow
      .command("instances")
      .description("list instances, newest first, a page at a time")
      .argument("[workflow]", "only this workflow's")
      .option("--state <state>", `only instances in this state: ${Object.keys(STATES).join(", ")}`, instanceState)
      .option("--limit <n>", "page size (default 100, at most 1000)", positiveInt)
      .option("--page-token <token>", "continue from a previous page (the token printed)"),
  )
    .addHelpText("after", "\nExample:\n  $ runlater workflow instances etl --state running")
    .action(
      async (
        name: string | undefined,
        opts: { state?: InstanceState; limit?: number; pageToken?: string } & JsonFlag,
        cmd: Command,
      ) => {
        const ctx = clientContext(io, cmd);
        const res = await ctx.clients.workflows.listInstances({
          workflow: name ?? "",
          state: opts.state,
          limit: opts.limit ?? 0,
          pageToken: opts.pageToken ?? "",
        });
        if (ctx.json) return printJson(io, ListInstancesResponseSchema, res);
        io.out(
          table(
            ["INSTANCE", "WORKFLOW", "VERSION", "STATE", "STARTED", "ENDED"],
            res.instances.map((i) => [
              i.instanceId,
              i.workflow,
              String(i.version),
              instanceStateName(i.state),
              formatTime(i.createdAt),
              formatTime(i.endedAt),
            ]),
          ),
        );
        if (res.nextPageToken !== "") io.err(`more instances: add --page-token ${res.nextPageToken}\n`);
      },
    );

  const change = (
    command: string,
    description: string,
    args: Array<[string, string, ((v: string) => number)?]>,
    call: (ctx: ClientContext, values: Array<string | number>) => Promise<{ instance?: Instance }>,
    done: string,
  ) => {
    const cmd = workflow.command(command).description(description);
    for (const [arg, help, parser] of args) {
      if (parser) cmd.argument(arg, help, parser);
      else cmd.argument(arg, help);
    }
    const example = ["wf_mq1a2b3c4d5e6f7a8", "load", "1"].slice(0, args.length).join(" ");
    cmd.addHelpText("after", `\nExample:\n  $ runlater workflow ${command} ${example}`);
    addJsonOption(cmd).action(async (...params: unknown[]) => {
      const self = params[params.length - 1] as Command;
      const values = params.slice(0, args.length) as Array<string | number>;
      const ctx = clientContext(io, self);
      const res = await call(ctx, values);
      if (ctx.json) return printJson(io, GetInstanceResponseSchema, create(GetInstanceResponseSchema, res));
      io.out(`${done} ${values.join(" ")}: instance is ${instanceStateName(res.instance!.state)}\n`);
    });
  };
  const instanceArg: [string, string] = ["<instance>", "the instance id"];
  const jobArg: [string, string] = ["<job>", "the job's name in the workflow"];
  const text = (v: string | number | undefined) => String(v);
  change(
    "cancel",
    "end a running instance: its pending queue jobs are deleted, running ones finish but post nothing",
    [instanceArg],
    (ctx, [id]) => ctx.clients.workflows.cancelInstance({ instanceId: text(id) }),
    "cancelled",
  );
  change(
    "close",
    "let an instance started --keep-open end once nothing is runnable or running",
    [instanceArg],
    (ctx, [id]) => ctx.clients.workflows.closeInstance({ instanceId: text(id) }),
    "closed",
  );
  change(
    "rerun",
    "post the events that triggered a run of a job again to the job's inputs",
    [instanceArg, jobArg, ["<run>", "the run number (workflow show lists them)", positiveInt]],
    (ctx, [id, job, run]) => ctx.clients.workflows.rerunJob({ instanceId: text(id), job: text(job), run: Number(run) }),
    "re-ran",
  );
  change(
    "disable",
    "stop a job of an instance from running (its current run is abandoned; events still gather)",
    [instanceArg, jobArg],
    (ctx, [id, job]) => ctx.clients.workflows.disableJob({ instanceId: text(id), job: text(job) }),
    "disabled",
  );
  change(
    "enable",
    "let a disabled job of an instance run again",
    [instanceArg, jobArg],
    (ctx, [id, job]) => ctx.clients.workflows.enableJob({ instanceId: text(id), job: text(job) }),
    "enabled",
  );
}

function readText(cmd: Command, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    usageError(cmd, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
