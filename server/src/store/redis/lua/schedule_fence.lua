--[[
  A schedule name's claim taken over (a shard of several, include/schedules.lua,
  store/schedule-names.ts): the claim's shard either holds the schedule, or from now on
  refuses the claim's insert (schedule_insert.lua checks its token in its own step).
  KEYS[1]  <prefix>:{wf}:s:<name>
  ARGV     prefix, name, token (the claim's)
  Returns  "exists" (nothing written) or "fenced".
]]
--@include keys
--@include schedules
if redis.call("EXISTS", scheduleKey(ARGV[2])) == 1 then return "exists" end
redis.call("SADD", SCHEDULE_FENCES, ARGV[3])
return "fenced"
