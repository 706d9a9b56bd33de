// Preloaded (node --import) into every server process the cluster harness starts: when
// the test process that spawned it goes away without cleaning up (vitest worker killed,
// SIGKILL of the test run), the server notices it was re-parented and kills itself, so
// no test ever leaves a runlater process behind. Test-only; the server knows nothing of it.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, "SIGKILL");
}, 250).unref();
