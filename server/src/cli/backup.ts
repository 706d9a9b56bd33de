import type { Command } from "commander";
import { invalidArgument } from "../domain/errors.js";
import { DEFAULT_SQLITE_URL, parseSqliteUrl } from "../store/sqlite/sqlite-url.js";
import type { CliIo } from "./io.js";

/**
 * `runlater backup DEST [--store sqlite:PATH]`: an online copy of a SQLite store, taken
 * while its server runs (store/sqlite/backup.ts). Restore: start a server on the copy.
 */
export function registerBackup(program: Command, io: CliIo): void {
  program
    .command("backup")
    .description(
      "copy a SQLite store to DEST while its server runs (one consistent snapshot, checked); restore by serving the copy",
    )
    .argument("<dest>", "the new file to write (never overwritten)")
    .option("--store <url>", `the store to copy: sqlite:PATH (default ${DEFAULT_SQLITE_URL})`, DEFAULT_SQLITE_URL)
    .addHelpText(
      "after",
      "\nExamples:\n  $ runlater backup backups/runlater-$(date +%F).db\n  $ runlater serve --store sqlite:backups/runlater-2026-11-27.db   # restore: serve the copy (or copy it into place)\n",
    )
    .action(async (dest: string, opts: { store: string }) => {
      if (!opts.store.startsWith("sqlite:"))
        throw invalidArgument(
          "store",
          `backup copies a sqlite: store, got "${opts.store}" (back Redis and MySQL up with their own tools)`,
        );
      const { backupDatabase } = await import("../store/sqlite/backup.js"); // node:sqlite, for this command only
      const r = backupDatabase(parseSqliteUrl(opts.store), dest);
      io.out(
        `backed up ${r.source} to ${r.dest}: ${r.bytes} bytes, ${r.queues} queues, ${r.jobs} jobs, schema version ${r.schemaVersion}; integrity check ok\n`,
      );
    });
}
