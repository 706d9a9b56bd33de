--[[
  workflowInsert (shard 0): a new version of a workflow definition, unless that version exists.
  KEYS[1]  <prefix>:{meta}:workflows         hash: workflow name -> its latest version
  KEYS[2]  <prefix>:{meta}:workflow:<name>   hash: version -> "<created_at> <definition>"
           (the definition as workflow-codec.ts encodes it)
  ARGV     prefix, name, version, created_at, definition
  Returns  1 inserted, 0 the version existed (nothing written).
]]
local name, version = ARGV[2], tonumber(ARGV[3])
if redis.call("HSETNX", KEYS[2], ARGV[3], ARGV[4] .. " " .. ARGV[5]) == 0 then return 0 end
if version > (tonumber(redis.call("HGET", KEYS[1], name)) or 0) then redis.call("HSET", KEYS[1], name, ARGV[3]) end
return 1
