/** How an action ends early with a chosen exit code; run.ts turns these into the process's. */
import type { Command } from "commander";

/** Thrown by an action that has already printed what went wrong and only needs an exit code. */
export class ExitStatus extends Error {
  constructor(readonly code: number) {
    super(`exit status ${code}`);
  }
}

/** Reports a usage error the way commander does (message, hint, exit 2). */
export function usageError(cmd: Command, message: string): never {
  cmd.error(`error: ${message}`, { exitCode: 2, code: "runlater.usage" });
}
