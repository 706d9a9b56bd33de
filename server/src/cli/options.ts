import { InvalidArgumentError } from "commander";

export function intOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`"${value}" is not a whole number`);
  return n;
}
