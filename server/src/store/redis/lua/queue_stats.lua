--[[
  queueStats (one shard): counters of the listed partitions, plus the pending jobs not yet
  due (ZCOUNT per priority and of the waiting set) and the oldest due run_after (zset
  heads and buffered jobs). Waiting jobs count as pending: users see them so.
  KEYS[1]  <prefix>:{shard}:checks   (routing only)
  ARGV     prefix, queue, now, partitions...
  Returns  { pending, buffered, running, succeeded, failed, scheduled, oldestDue or "" }
]]
--@include keys
--@include job_record
--@include ledgers
local queue, now = ARGV[2], tonumber(ARGV[3])
local totals = { 0, 0, 0, 0, 0, 0 }
local oldest
local function seen(ra)
  if ra <= now and (not oldest or ra < oldest) then oldest = ra end
end
for i = 4, #ARGV do
  local tag = tagOf(queue, ARGV[i])
  local n = redis.call("HMGET", tag .. ":n", "p", "b", "r", "s", "f", "maxpr", "w")
  for k = 1, 5 do totals[k] = totals[k] + (tonumber(n[k]) or 0) end
  totals[1] = totals[1] + (tonumber(n[7]) or 0)
  local waiting = tag .. ":w"
  totals[6] = totals[6] + redis.call("ZCOUNT", waiting, "(" .. N(now), "+inf")
  local first = redis.call("ZRANGE", waiting, 0, 0, "WITHSCORES")
  if first[2] then seen(tonumber(first[2])) end
  for priority = 1, tonumber(n[6]) or 0 do
    local key = tag .. ":p:" .. priority
    totals[6] = totals[6] + redis.call("ZCOUNT", key, "(" .. N(now), "+inf")
    local head = redis.call("ZRANGE", key, 0, 0, "WITHSCORES")
    if head[2] then seen(tonumber(head[2])) end
  end
  for _, job in ipairs(bufferedJobs(tag)) do seen(job.ra) end
end
totals[7] = oldest and N(oldest) or ""
return totals
