/** Durations in messages people read: the largest whole unit ("7 days", "60 s", "250 ms"). */
const UNITS: Array<[number, string]> = [
  [86_400_000, "days"],
  [3_600_000, "h"],
  [60_000, "min"],
  [1000, "s"],
];

export function formatDuration(ms: number): string {
  for (const [size, unit] of UNITS) if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}
