/**
 * Seeded random values for tests that compare two implementations over many inputs (the
 * hand-written DequeueStream codecs against protobuf-es): the same seed, the same values.
 */
import { seeded } from "./adversarial/fuzz-cases.js";

/** Characters of every UTF-8 length, a space and a newline, for text fields. */
const CHARS = ["a", "Z", "0", ".", " ", "é", "日", "😀", "\n"];

export function seededValues(seed: number) {
  const next = seeded(seed);
  const int = (max: number) => Math.floor(next() * max);
  const text = (maxLength = 30) => Array.from({ length: int(maxLength) }, () => CHARS[int(CHARS.length)]).join("");
  return { next, int, text };
}

export type SeededValues = ReturnType<typeof seededValues>;
