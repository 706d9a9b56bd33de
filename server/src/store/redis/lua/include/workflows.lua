--[[
  Workflow instances (docs/workflows.md), each on its shard with the queue jobs of its
  runs (store/instance-placement.ts). Instance `id`:
    <prefix>:{wf}:i:<id>     hash: rev, state, workflow, created (created_at), ended
                             (ended_at), data (the instance as workflow-codec.ts encodes it)
    <prefix>:{wf}:list[…]    zsets of every instance, by workflow (:w:<workflow>), by state
                             (:s:<state>) and by both (:ws:<state>:<workflow>): score 0,
                             member created_at as 16 digits then the id, so the members'
                             byte order is the list order (newest first read backwards)
    <prefix>:{wf}:ended      zset: ended instances, score ended_at (retention)
  Needs keys.lua included before it.
]]
local WF = PREFIX .. ":{wf}"
local ENDED = WF .. ":ended"

local function instanceKey(id)
  return WF .. ":i:" .. id
end

-- The list an instance is in for the filters given ("" for none): instance_list.lua reads one.
local function listKey(workflow, state)
  if workflow ~= "" and state ~= "" then return WF .. ":list:ws:" .. state .. ":" .. workflow end
  if workflow ~= "" then return WF .. ":list:w:" .. workflow end
  if state ~= "" then return WF .. ":list:s:" .. state end
  return WF .. ":list"
end

local function listMember(createdAt, id)
  return string.format("%016.0f", tonumber(createdAt)) .. id
end

-- Every list, and retention's index, of an instance with these fields.
local function listInstance(id, state, workflow, createdAt, endedAt)
  local member = listMember(createdAt, id)
  for _, w in ipairs({ "", workflow }) do
    for _, s in ipairs({ "", state }) do redis.call("ZADD", listKey(w, s), "0", member) end
  end
  if state ~= "running" then redis.call("ZADD", ENDED, endedAt, id) end
end

local function unlistInstance(id, state, workflow, createdAt)
  local member = listMember(createdAt, id)
  for _, w in ipairs({ "", workflow }) do
    for _, s in ipairs({ "", state }) do redis.call("ZREM", listKey(w, s), member) end
  end
  redis.call("ZREM", ENDED, id)
end

-- The instance's stored revision; 0 when there is none.
local function instanceRev(id)
  return tonumber(redis.call("HGET", instanceKey(id), "rev") or "0")
end

-- Writes (creates or replaces) an instance, moving it between lists when its state changed.
local function writeInstance(id, rev, state, workflow, createdAt, endedAt, data)
  local key = instanceKey(id)
  local old = redis.call("HMGET", key, "state", "workflow", "created", "ended")
  local listed = old[1] and old[1] == state and old[2] == workflow and old[3] == createdAt and old[4] == endedAt
  if old[1] and not listed then unlistInstance(id, old[1], old[2], old[3]) end
  redis.call("HSET", key, "rev", rev, "state", state, "workflow", workflow, "created", createdAt, "ended", endedAt,
    "data", data)
  if not listed then listInstance(id, state, workflow, createdAt, endedAt) end
end

local function deleteInstance(id)
  local key = instanceKey(id)
  local old = redis.call("HMGET", key, "state", "workflow", "created")
  if old[1] then unlistInstance(id, old[1], old[2], old[3]) end
  redis.call("DEL", key)
end
