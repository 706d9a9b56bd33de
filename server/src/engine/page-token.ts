/** Scan page tokens: where the next page starts, opaque to clients (base64url of JSON). */
import { invalidArgument } from "../domain/errors.js";
import type { ScanCursor } from "../domain/job-filter.js";

export function encodeCursor(c: ScanCursor): string {
  return Buffer.from(JSON.stringify([c.runAfter, c.id])).toString("base64url");
}

export function decodeCursor(token: string): ScanCursor {
  try {
    const [runAfter, id] = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as [unknown, unknown];
    if (typeof runAfter === "number" && typeof id === "string") return { runAfter, id };
  } catch {
    // fall through
  }
  throw invalidArgument("page_token", "page_token is not one this server issued: pass next_page_token unchanged");
}
