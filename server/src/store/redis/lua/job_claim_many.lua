--[[
  jobClaimMany: moves up to `limit` due pending jobs of one partition to buffered under
  `epoch`, best first (priority, then run_after, then seq): O(k log n), no scan.
  KEYS[1]  <tag>:lease   the claim is refused unless its epoch is the lease's
  KEYS[2]  <tag>:n       counters (maxpr: highest priority ever enqueued here)
  ARGV     prefix, queue, partition, epoch, limit, now
  Returns  { record, ... } (after the change), or {} for a stale epoch.
]]
--@include keys
--@include job
--@include transitions
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, limit, now = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
if tonumber(redis.call("HGET", KEYS[1], "epoch")) ~= epoch then return {} end
local maxPriority = tonumber(redis.call("HGET", KEYS[2], "maxpr")) or 0
local out = {}
for priority = 1, maxPriority do
  if #out >= limit then break end
  local members = redis.call("ZRANGEBYSCORE", tag .. ":p:" .. priority, "-inf", N(now), "LIMIT", 0, limit - #out)
  for _, member in ipairs(members) do
    local id = string.sub(member, 17)
    local job = loadJob(tag, id)
    if job then
      apply(tag, job, claimIntoBuffer(epoch, now))
      out[#out + 1] = record(tag, id)
    else
      redis.call("ZREM", tag .. ":p:" .. priority, member) -- an entry without its job: drop it
    end
  end
end
flushCounts()
return out
