import { Command } from "commander";
import { registerServe } from "./serve.js";

export function buildProgram(): Command {
  const program = new Command("runlater")
    .description("runlater: an asynchronous job server (PinLater / Pacer style)")
    .showHelpAfterError();
  registerServe(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
