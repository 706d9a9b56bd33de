--[[
  jobClaimMany: moves up to `limit` due pending jobs of one partition to buffered under
  `epoch`, best first (priority, then run_after, then seq): O(k log n), no scan.
  The patch is transitions.lua's claimIntoBuffer, the same for every job of the batch.
  KEYS[1]  <tag>:lease   the claim is refused unless its epoch is the lease's
  KEYS[2]  <tag>:n       counters (maxpr: highest priority ever enqueued here)
  ARGV     prefix, queue, partition, epoch, limit, now, maxBytes ("" for no bound: else the
           claim stops before the job whose body would take the claimed bodies past it,
           claiming the first whatever its size: engine/byte-budget.ts's rule)
  Returns  { record, ... } (after the change, packed by packRecord), or {} for a stale epoch.
  One GET and one in-place SETRANGE (storeJob) per job.
]]
--@include keys
--@include transitions
--@include job
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, limit, now, maxBytes = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if tonumber(redis.call("HGET", KEYS[1], "epoch")) ~= epoch then return {} end
local maxPriority = tonumber(redis.call("HGET", KEYS[2], "maxpr")) or 0
-- Every claimed job gets the same patch and moves from one known index to another, so the
-- loop does apply()'s work without recomputing what it already has (the pending member,
-- the counters once per call): ~15 % of a claim's time inside Redis.
local patch = claimIntoBuffer(epoch)
local bufKey = tag .. ":buf"
local out = {}
local bytes, full = 0, false
for priority = 1, maxPriority do
  if full or #out >= limit then break end
  local pendingKey = tag .. ":p:" .. priority
  local members = redis.call("ZRANGEBYSCORE", pendingKey, "-inf", N(now), "LIMIT", 0, limit - #out)
  for _, member in ipairs(members) do
    local id = string.sub(member, 17)
    local stored = redis.call("GET", jobKey(tag, id)) -- whole: the reply carries the body
    local job = stored and unpackJob(id, stored)
    if maxBytes and job and job.st == "p" then
      bytes = bytes + #stored - job._size
      if bytes > maxBytes and #out > 0 then
        full = true
        break
      end
    end
    zremLater(pendingKey, member)
    if job and job.st == "p" then
      job._whole = true
      for f, value in pairs(patch) do job[f] = value end
      storeJob(tag, job) -- in place: the patch keeps the prefix's length
      zaddLater(bufKey, N(job.be), id)
      out[#out + 1] = recordAsWritten(job)
    end -- else: an entry without its pending job (deleted): dropped above
  end
end
count(tag, "p", -#out)
count(tag, "b", #out)
flushCounts()
return out
