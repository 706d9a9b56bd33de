--[[
  scheduleReplace (the schedule's shard, include/schedules.lua): the schedule written over the revision
  it was decided on.
  KEYS[1]  <prefix>:{wf}:s:<name>
  ARGV     prefix, rev (the stored revision expected), name, rev, next_fire_at, data
  Returns  1 replaced; 0 the stored schedule is at another revision or gone (nothing written).
]]
--@include keys
--@include schedules
local name = ARGV[3]
if scheduleRev(name) ~= tonumber(ARGV[2]) then return 0 end
writeSchedule(name, ARGV[4], ARGV[5], ARGV[6])
return 1
