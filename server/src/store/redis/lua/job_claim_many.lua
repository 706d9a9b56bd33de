--[[
  jobClaimMany: moves up to `limit` due pending jobs of one partition to buffered under
  `epoch`, best first (priority, then run_after, then seq): O(k log n), no scan.
  The patch is transitions.lua's claimIntoBuffer, the same for every job of the batch.
  KEYS[1]  <tag>:lease   the claim is refused unless its epoch is the lease's
  KEYS[2]  <tag>:n       counters (maxpr: highest priority ever enqueued here)
  ARGV     prefix, queue, partition, epoch, limit, now
  Returns  { record, ... } (after the change, packed by packRecord), or {} for a stale epoch.
]]
--@include keys
--@include transitions
--@include job
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, limit, now = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
if tonumber(redis.call("HGET", KEYS[1], "epoch")) ~= epoch then return {} end
local maxPriority = tonumber(redis.call("HGET", KEYS[2], "maxpr")) or 0
-- Every claimed job gets the same patch: one HSET each, and the reply is the job as read
-- (one HMGET each) with the patched positions overwritten, instead of a load into a Lua
-- table, a generic apply and a second read.
local patch = claimIntoBuffer(epoch, now)
local st, be, ua = patch.st, N(patch.be), N(patch.ua)
local bufKey = tag .. ":buf"
local out = {}
for priority = 1, maxPriority do
  if #out >= limit then break end
  local pendingKey = tag .. ":p:" .. priority
  local members = redis.call("ZRANGEBYSCORE", pendingKey, "-inf", N(now), "LIMIT", 0, limit - #out)
  for _, member in ipairs(members) do
    local id = string.sub(member, 17)
    local key = jobKey(tag, id)
    local v = redis.call("HMGET", key, unpack(RECORD_FIELDS))
    zremLater(pendingKey, member)
    if v[1] == "p" then
      redis.call("HSET", key, "st", st, "be", be, "ua", ua)
      zaddLater(bufKey, be, id)
      v[1], v[9], v[14] = st, ua, be -- positions of st, ua, be in RECORD_FIELDS
      out[#out + 1] = packRecord(id, v)
    end -- else: an entry without its pending job (deleted): dropped above
  end
end
count(tag, "p", -#out)
count(tag, "b", #out)
flushCounts()
return out
