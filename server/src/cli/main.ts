import { Command } from "commander";
import { registerBackup } from "./backup.js";
import { addUrlOption } from "./client.js";
import { registerEnqueue } from "./enqueue.js";
import { type CliIo, processIo } from "./io.js";
import { registerJobs } from "./jobs.js";
import { registerMigrate } from "./migrate.js";
import { registerQueue } from "./queue.js";
import { runCli } from "./run.js";
import { registerSchedule } from "./schedule.js";
import { registerServe } from "./serve.js";
import { registerToken } from "./token.js";
import { registerWork } from "./work.js";
import { registerWorkflow } from "./workflow.js";

/**
 * The whole command tree. `io` carries stdout, stderr, stdin and the environment, so tests
 * can run commands in-process; commander's own output (help, parse errors) goes there too.
 */
export function buildProgram(io: CliIo = processIo): Command {
  const program = new Command("runlater")
    .description("runlater: an asynchronous job server (PinLater / Pacer style)")
    // Commander would call process.exit; runCli turns its errors into exit codes instead.
    // Both settings are inherited by every command added below.
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("(add --help for usage)");
  addUrlOption(program);
  registerServe(program);
  registerQueue(program, io);
  registerEnqueue(program, io);
  registerJobs(program, io);
  registerMigrate(program, io);
  registerBackup(program, io);
  registerToken(program, io);
  registerWorkflow(program, io);
  registerSchedule(program, io);
  registerWork(program, io);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  // exitCode, not exit(): `serve` keeps running after parsing returns.
  process.exitCode = await runCli(buildProgram(), argv, processIo);
}
