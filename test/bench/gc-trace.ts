/** Reading a process's `--trace-gc-nvp` output (Node 24's key=value lines, or Node 26's JSON). */

export interface Scavenge {
  /** Bytes moved to the old generation. */
  promoted: number;
  pauseMs: number;
}

/** Every young-generation collection (scavenge) in `log`, in order. */
export function scavenges(log: string): Scavenge[] {
  const out: Scavenge[] = [];
  for (const line of log.split("\n")) {
    const nvp = / gc=s /.test(line);
    if (!nvp && !/"gc":"s"/.test(line)) continue;
    const field = (name: string) =>
      Number((nvp ? new RegExp(` ${name}=([\\d.]+)`) : new RegExp(`"${name}":([\\d.]+)`)).exec(line)?.[1] ?? 0);
    out.push({ promoted: field("promoted"), pauseMs: field("pause") });
  }
  return out;
}
