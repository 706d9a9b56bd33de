--[[
  jobNextDueAt: the earliest run_after of a partition's pending jobs: the head of each
  priority's zset, O(priorities log n).
  KEYS[1]  <tag>:n   counters (maxpr)
  ARGV     prefix, queue, partition
  Returns  the run_after as a string, or nil when nothing is pending.
]]
--@include keys
local tag = tagOf(ARGV[2], ARGV[3])
local maxPriority = tonumber(redis.call("HGET", KEYS[1], "maxpr")) or 0
local best
for priority = 1, maxPriority do
  local head = redis.call("ZRANGE", tag .. ":p:" .. priority, 0, 0, "WITHSCORES")
  if head[2] and (not best or tonumber(head[2]) < tonumber(best)) then best = head[2] end
end
return best
