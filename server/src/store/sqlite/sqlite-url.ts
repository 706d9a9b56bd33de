/**
 * The SQLite store's `--store` URL (docs/sqlite.md):
 *
 *   sqlite:PATH                     a file path, relative to the working directory or absolute
 *   sqlite:///absolute/path.db      the same with an empty host, like file:///…
 *   …?synchronous=full              fsync the WAL at every commit: what was answered survives power loss too
 *
 * Percent-escapes in the path are decoded (`%3F` for a `?` in a file name).
 */
import { invalidArgument } from "../../domain/errors.js";

/**
 * SQLite's own durability settings in WAL mode. normal: a commit is in the WAL (the OS has
 * it) before the call is answered, so it survives the process being killed; the WAL is
 * fsynced at checkpoints only, so power loss may undo the latest commits (never corrupting
 * the file). full: the WAL is fsynced at every commit, so answered calls survive power loss.
 */
export type Synchronous = "normal" | "full";

export interface SqliteLocation {
  /** The database file as given (relative to the working directory or absolute). */
  path: string;
  synchronous: Synchronous;
}

/** Where `runlater serve`, `migrate` and `backup` keep their data when no --store is given. */
export const DEFAULT_SQLITE_PATH = "runlater-data/runlater.db";
export const DEFAULT_SQLITE_URL = `sqlite:${DEFAULT_SQLITE_PATH}`;

const USAGE = "use sqlite:PATH (relative or absolute) or sqlite:///absolute/path, optionally ?synchronous=full";

export function parseSqliteUrl(url: string): SqliteLocation {
  if (!url.startsWith("sqlite:")) throw invalidArgument("store", `"${url}" is not a sqlite: URL; ${USAGE}`);
  const [rest = "", query = ""] = splitOnce(url.slice("sqlite:".length), "?");
  let raw = rest;
  if (raw.startsWith("//")) {
    // sqlite:///abs (empty host) or sqlite://localhost/abs, as file: URLs allow; any other host is a mistake.
    const slash = raw.indexOf("/", 2);
    const host = slash < 0 ? raw.slice(2) : raw.slice(2, slash);
    if (host !== "" && host !== "localhost")
      throw invalidArgument(
        "store",
        `"${url}" names a host ("${host}"): a SQLite file is local; ${USAGE} (sqlite:${raw.slice(2)} for a relative path)`,
      );
    raw = slash < 0 ? "" : raw.slice(slash);
  }
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    throw invalidArgument("store", `"${url}" has a malformed %-escape in its path; ${USAGE}`);
  }
  if (path === "") throw invalidArgument("store", `"${url}" names no file; ${USAGE}`);
  if (path.includes("\u0000")) throw invalidArgument("store", `"${url}" has a NUL character in its path`);
  return { path, synchronous: parseParams(url, query) };
}

/** The one sqlite: URL of a --store list (a SQLite store is one file, no shards). */
export function oneSqliteUrl(urls: string[]): SqliteLocation {
  if (urls.length !== 1) throw invalidArgument("store", "a SQLite store is one file: give --store sqlite:PATH once");
  return parseSqliteUrl(urls[0]!);
}

function parseParams(url: string, query: string): Synchronous {
  let synchronous: Synchronous = "normal";
  for (const [name, value] of new URLSearchParams(query)) {
    if (name !== "synchronous")
      throw invalidArgument(
        "store",
        `"${url}": unknown parameter "${name}" (the sqlite store knows synchronous=normal|full)`,
      );
    const v = value.toLowerCase();
    if (v !== "normal" && v !== "full")
      throw invalidArgument("store", `"${url}": synchronous is normal (the default) or full, not "${value}"`);
    synchronous = v;
  }
  return synchronous;
}

function splitOnce(s: string, sep: string): [string, string?] {
  const i = s.indexOf(sep);
  return i < 0 ? [s] : [s.slice(0, i), s.slice(i + 1)];
}
