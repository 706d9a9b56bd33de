/** `runlater queue create|update|delete|list|show`: queue administration (QueueService). */
import {
  CreateQueueResponseSchema,
  DeleteQueueResponseSchema,
  GetQueueResponseSchema,
  ListQueuesResponseSchema,
  type Queue,
  UpdateQueueResponseSchema,
} from "@runlater/sdk/gen/queue_service_pb.js";
import type { Command } from "commander";
import { addJsonOption, clientContext } from "./client.js";
import { usageError } from "./exits.js";
import type { CliIo } from "./io.js";
import { printJson } from "./json.js";
import { fields, formatAge, formatDuration, formatRate, table, yesNo } from "./output.js";
import {
  addCreateOnlyFlags,
  addTunableFlags,
  addUpdateOnlyFlags,
  fieldMask,
  type QueueFlagValues,
  queueConfigFromFlags,
} from "./queue-flags.js";

type JsonFlag = { json?: boolean };

export function registerQueue(program: Command, io: CliIo): void {
  const queue = program.command("queue").description("create, change, delete, list and inspect queues");

  const createCmd = queue
    .command("create")
    .description(
      "create a queue; unset flags take their defaults. Creating an existing queue changes nothing (use `queue update`)",
    )
    .argument("<name>", "queue name: 1 to 64 letters, digits and underscores");
  addCreateOnlyFlags(addTunableFlags(createCmd));
  addJsonOption(createCmd)
    .addHelpText(
      "after",
      "\nExample:\n  $ runlater queue create emails --priorities 5 --claim-timeout 30s --max-dequeue-per-second 100",
    )
    .action(async (name: string, opts: QueueFlagValues & JsonFlag, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const { config, paths } = queueConfigFromFlags(opts);
      const res = await ctx.clients.queues.createQueue({ name, config });
      if (ctx.json) return printJson(io, CreateQueueResponseSchema, res);
      if (res.created) io.out(`created queue ${name}\n`);
      else {
        io.out(`queue ${name} already exists; nothing changed\n`);
        if (paths.length > 0)
          io.err(`note: the flags given were not applied; to change the queue use: runlater queue update ${name} …\n`);
      }
      if (res.queue) io.out(describeQueue(res.queue));
    });

  const updateCmd = queue
    .command("update")
    .description(
      "change a queue's settings at runtime; only the flags given are changed (fifo is fixed at create; partitions may only grow)",
    )
    .argument("<name>", "queue name");
  addUpdateOnlyFlags(addTunableFlags(updateCmd));
  addJsonOption(updateCmd)
    .addHelpText(
      "after",
      "\nPause and resume with --pause / --resume. A duration or count flag set to 0\n" +
        "restores that field's default (but --max-dequeue-per-second 0 means unlimited).\n\nExamples:\n  $ runlater queue update emails --pause\n  $ runlater queue update emails --resume --max-dequeue-per-second 50",
    )
    .action(async (name: string, opts: QueueFlagValues & JsonFlag, cmd: Command) => {
      const { config, paths } = queueConfigFromFlags(opts);
      if (paths.length === 0)
        usageError(cmd, "nothing to change: give at least one setting flag (see runlater queue update --help)");
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.queues.updateQueue({ name, config, updateMask: fieldMask(paths) });
      if (ctx.json) return printJson(io, UpdateQueueResponseSchema, res);
      io.out(`updated queue ${name} (${paths.join(", ")})\n`);
      if (res.queue) io.out(describeQueue(res.queue));
    });

  addJsonOption(
    queue
      .command("delete")
      .description("delete a queue and every job in it (no undo). Deleting a missing queue is not an error")
      .argument("<name>", "queue name"),
  )
    .addHelpText("after", "\nExample:\n  $ runlater queue delete emails")
    .action(async (name: string, _opts: JsonFlag, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.queues.deleteQueue({ name });
      if (ctx.json) return printJson(io, DeleteQueueResponseSchema, res);
      io.out(res.deleted ? `deleted queue ${name}\n` : `queue ${name} did not exist; nothing deleted\n`);
    });

  addJsonOption(queue.command("list").description("list every queue with its live counts"))
    .addHelpText("after", "\nExample:\n  $ runlater queue list")
    .action(async (_opts: JsonFlag, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.queues.listQueues({});
      if (ctx.json) return printJson(io, ListQueuesResponseSchema, res);
      if (res.queues.length === 0) {
        io.err("no queues yet; create one with: runlater queue create NAME\n");
        return;
      }
      io.out(
        table(
          ["NAME", "PENDING", "SCHEDULED", "RUNNING", "SUCCEEDED", "FAILED", "OLDEST PENDING", "PAUSED", "RATE"],
          res.queues.map((q) => [
            q.name,
            String(q.stats?.pending ?? 0n),
            String(q.stats?.scheduled ?? 0n),
            String(q.stats?.running ?? 0n),
            String(q.stats?.succeeded ?? 0n),
            String(q.stats?.failed ?? 0n),
            formatAge(q.stats?.oldestPendingAge),
            yesNo(q.config?.paused ?? false),
            formatRate(q.config?.maxDequeuePerSecond ?? 0),
          ]),
        ),
      );
    });

  addJsonOption(
    queue.command("show").description("show one queue's settings and live counts").argument("<name>", "queue name"),
  )
    .addHelpText("after", "\nExample:\n  $ runlater queue show emails")
    .action(async (name: string, _opts: JsonFlag, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.queues.getQueue({ name });
      if (ctx.json) return printJson(io, GetQueueResponseSchema, res);
      if (res.queue) io.out(describeQueue(res.queue));
    });
}

/** Settings under the names of the flags that change them, then the live counts. */
export function describeQueue(q: Queue): string {
  const c = q.config;
  const s = q.stats;
  const settings = fields([
    ["name", q.name],
    ["paused", yesNo(c?.paused ?? false)],
    ["priorities", String(c?.priorities ?? 0)],
    ["claim-timeout", formatDuration(c?.claimTimeout)],
    ["retry-initial-delay", formatDuration(c?.retryPolicy?.initialDelay)],
    ["retry-linear-steps", String(c?.retryPolicy?.linearSteps ?? 0)],
    ["retry-max-delay", formatDuration(c?.retryPolicy?.maxDelay)],
    ["default-attempts", String(c?.defaultAttemptsAllowed ?? 0)],
    ["max-dequeue-per-second", formatRate(c?.maxDequeuePerSecond ?? 0)],
    ["succeeded-retention", formatDuration(c?.succeededRetention)],
    ["failed-retention", formatDuration(c?.failedRetention)],
    ["fifo", yesNo(c?.fifo ?? false)],
    ["partitions", String(c?.partitions ?? 0)],
    ["max-body-bytes", String(c?.maxBodyBytes ?? 0)],
  ]);
  const stats = fields([
    ["pending", String(s?.pending ?? 0n)],
    ["scheduled", String(s?.scheduled ?? 0n)],
    ["running", String(s?.running ?? 0n)],
    ["succeeded", String(s?.succeeded ?? 0n)],
    ["failed", String(s?.failed ?? 0n)],
    ["oldest pending age", formatAge(s?.oldestPendingAge)],
  ]);
  return `${settings}stats:\n${indent(stats)}`;
}

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, "  ");
}
