/**
 * The CLI's window on the outside world. Commands write through this instead of touching
 * process.stdout/stderr/stdin/env directly, so tests can run them in-process and read
 * what they printed.
 */
export interface CliIo {
  /** Writes to standard output (results: tables, ids, JSON). */
  out(text: string): void;
  /** Writes to standard error (errors, hints, progress notes). */
  err(text: string): void;
  /** Reads standard input to its end. */
  readStdin(): Promise<Uint8Array>;
  /** True when stdin is a terminal: then a missing body is a mistake, not "read stdin". */
  stdinIsTTY: boolean;
  /** Environment variables (RUNLATER_URL). */
  env: Record<string, string | undefined>;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  async readStdin() {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin)
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
    return new Uint8Array(Buffer.concat(chunks));
  },
  get stdinIsTTY() {
    return process.stdin.isTTY === true;
  },
  env: process.env,
};
