--[[
  leaseAcquire: takes or renews a partition lease; a new owner gets a higher epoch.
  Epochs come from one counter per shard, so they only grow, also across DeleteQueue and a
  queue created again under the same name (its old owner stays fenced, and no key of the
  deleted queue has to be kept).
  KEYS[1]  <tag>:lease                  hash owner, epoch, exp
  KEYS[2]  <tag>:q                      partition marker: no lease on a queue that does not exist
  KEYS[3]  <prefix>:{shard}:epoch       the shard's epoch counter
  ARGV     prefix, owner, ttlMs, now
  Returns  { epoch, expiresAt } or nil when another owner holds an unexpired lease.
]]
local owner, ttl, now = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
if redis.call("EXISTS", KEYS[2]) == 0 then return nil end
local current = redis.call("HMGET", KEYS[1], "owner", "epoch", "exp")
local holder, epoch, exp = current[1] or "", tonumber(current[2]) or 0, tonumber(current[3]) or 0
if holder ~= "" and holder ~= owner and exp > now then return nil end
if holder ~= owner then epoch = redis.call("INCR", KEYS[3]) end
local expiresAt = string.format("%.0f", now + ttl)
redis.call("HSET", KEYS[1], "owner", owner, "epoch", string.format("%.0f", epoch), "exp", expiresAt)
return { epoch, expiresAt }
