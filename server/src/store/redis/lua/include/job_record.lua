--[[
  The job record: how a job is stored, read, written and sent back. A job is one string:
  its attributes packed into a binary prefix (META below), then its body. A transition
  reads the string, changes the prefix and writes it back (in place with SETRANGE when its
  length did not change; the claim token's fixed slot keeps claim, hand-out and ACK at one
  length): no per-job hash to create, look fields up in or free. Against one hash field per
  attribute that cut a hand-out's and an ACK's cost inside Redis by about a third at a few
  hundred thousand jobs (where every lookup is a cache miss), and a pending job's memory by
  40 % (docs/redis.md).
  The job's attributes, as loadJob returns them (short names, used across the scripts):
    st state (p pending, w waiting, b buffered, r running, s succeeded, f failed)
    be buffer_epoch   bn buffer batch (the claim's number: see ledgers.lua; this store's own)
    ce claim_expires_at   ua updated_at   fa finished_at
    ct claim_token (a 1-byte length, then a TOKEN_WIDTH slot)
    at attempt   ar attempts_remaining   rd retry_delay_ms
    pr priority   ra run_after   aa attempts_allowed   ca created_at   sq seq
    ok ordering_key   ik idempotency_key   cs custom_status (a 4-byte length, then the bytes)
    wf the workflow context of a run of a workflow job (JobRecord.workflow), nil for any
       other job
    tp the W3C traceparent given at enqueue (JobRecord.traceparent), nil for none
       A job with either is flagged by EXTRAS_FLAG in the token's length byte, and both
       follow the three texts as a fourth and a fifth ("" for the one it lacks). Plain
       jobs carry neither, so their layout and cost are what they were; the lean paths
       learn that a job may be a workflow job from its head alone (lean_paths.lua).
  (numbers: little-endian doubles, but bn a 4-byte integer). The order serves the hot
  path: a claim, a hand-out and an ACK change only fields of the fixed-width HEAD (st …
  rd), so they read and rewrite that alone (lean_paths.lua: the Lua work of unpacking and
  packing every field was most of a transition's cost inside Redis); the claim's three
  fields lead it.
  codec.ts decodes the same layout; change the two together (and JOB_LAYOUT in shard-check.ts).
  Also here: the formatting of numbers as Redis arguments (N, offsets) every job script uses.
  Needs keys.lua included before it.
]]
-- The claim token has a fixed width (a length, then TOKEN_WIDTH bytes, zero-padded), so a
-- hand-out, which sets it, keeps the prefix's length and writes in place.
local TOKEN_WIDTH = {{claimTokenMaxBytes}}
-- The buffer batch is a 4-byte counter (claims wrap around after 2^32: batches live for
-- seconds, so names stay unique among live ones) and the token's length one byte: the
-- prefix stays as long as before the batch was added, so a job with a 200-byte body still
-- fits the allocator's 384-byte class (one more byte: 448).
local HEAD = "<c1dI4dddBc" .. TOKEN_WIDTH .. "ddd"
local HEAD_SIZE = 1 + 8 + 4 + 3 * 8 + 1 + TOKEN_WIDTH + 3 * 8
local META = HEAD .. "dddddI4c0I4c0I4c0"
-- Where the ordering key's length sits (1-based): after the head and five doubles (pr, ra,
-- aa, ca, sq).
local KEY_LENGTH_AT = HEAD_SIZE + 5 * 8 + 1
local PRIORITY_AT = HEAD_SIZE + 1 -- pr, then ra
local SEQ_AT = HEAD_SIZE + 4 * 8 + 1
local TOKEN_PAD = string.rep("\0", TOKEN_WIDTH)
-- (1-based) where the token's length byte lies in the head: after st, be, bn, ce, ua, fa.
local TOKEN_LENGTH_AT = 1 + 1 + 8 + 4 + 3 * 8
-- Added to that byte (a token is at most TOKEN_WIDTH = 64 bytes) for a job that carries
-- a workflow context or a traceparent (the two extra texts).
local EXTRAS_FLAG = 128
local EXTRAS = "I4c0I4c0"

-- Offsets for GETRANGE and SETRANGE, as strings: a number passed to redis.call is
-- formatted with printf at every call, and the hot paths make several calls per job (that
-- formatting was a seventh of a hand-out's and an ACK's instructions in Redis).
local OFFSET_0 = "0"
local function offset(n)
  return string.format("%d", n)
end
local HEAD_LAST = offset(HEAD_SIZE - 1)
local KEY_LENGTH_LAST = offset(KEY_LENGTH_AT + 2)

-- Integers as Redis arguments: never Lua's %.14g exponent form. A batch repeats the same
-- few values (now, an expiry, an epoch) many times, and formatting goes through printf:
-- remember them for the call.
local formatted = {}
local function N(x)
  local s = formatted[x]
  if not s then
    s = string.format("%.0f", x)
    formatted[x] = s
  end
  return s
end

-- parent[key], a table made on first use (the per-script collections below are keyed by
-- index key, partition or time).
local function tableIn(parent, key)
  local t = parent[key]
  if not t then
    t = {}
    parent[key] = t
  end
  return t
end

-- The job table of a stored job string. `job._size` is the packed prefix's length and
-- `job._stored` the string as read (whole, or its head: see loadJob), so storeJob can
-- write back only what changed.
local function unpackJob(id, stored)
  local st, be, bn, ce, ua, fa, tokenLength, ct, at, ar, rd, pr, ra, aa, ca, sq, ok, ik, cs, next = struct.unpack(META, stored)
  local wf, tp
  if tokenLength >= EXTRAS_FLAG then
    tokenLength = tokenLength - EXTRAS_FLAG
    wf, tp, next = struct.unpack("<" .. EXTRAS, stored, next)
    if wf == "" then wf = nil end
    if tp == "" then tp = nil end
  end
  -- One constructor: a table filled field by field would be rehashed as it grows.
  return {
    id = id, _stored = stored, _size = next - 1, st = st, be = be, bn = bn, ce = ce, ua = ua, fa = fa,
    ct = string.sub(ct, 1, tokenLength), at = at, ar = ar, rd = rd, pr = pr, ra = ra, aa = aa, ca = ca, sq = sq,
    ok = ok, ik = ik, cs = cs, wf = wf, tp = tp,
  }
end

local function padToken(ct)
  if ct == "" then return TOKEN_PAD end -- (every new job's)
  if #ct > TOKEN_WIDTH then error("claim token longer than " .. TOKEN_WIDTH .. " bytes") end
  return ct .. string.sub(TOKEN_PAD, #ct + 1)
end

-- A new job's stored string: the prefix codec.ts packed (pending, seq 0) with the job's
-- state and seq written over, then the body.
local function newJobString(prefix, st, seq, body)
  return st .. string.sub(prefix, 2, SEQ_AT - 1) .. struct.pack("<d", seq) .. string.sub(prefix, SEQ_AT + 8) .. body
end

-- The packed attributes (the string's prefix) of a job table.
local function packJob(job)
  local ct, ok, ik, cs, wf, tp = job.ct, job.ok, job.ik, job.cs, job.wf, job.tp
  if wf or tp then
    wf, tp = wf or "", tp or ""
    return struct.pack(META .. EXTRAS, job.st, job.be, job.bn, job.ce, job.ua, job.fa, #ct + EXTRAS_FLAG,
      padToken(ct), job.at, job.ar, job.rd, job.pr, job.ra, job.aa, job.ca, job.sq, #ok, ok, #ik, ik, #cs, cs, #wf, wf,
      #tp, tp)
  end
  return struct.pack(META, job.st, job.be, job.bn, job.ce, job.ua, job.fa, #ct, padToken(ct), job.at, job.ar, job.rd,
    job.pr, job.ra, job.aa, job.ca, job.sq, #ok, ok, #ik, ik, #cs, cs)
end

-- The packed prefix's length of a stored job string: where its body starts, minus one.
local function prefixSize(stored)
  local _, _, _, next = struct.unpack("<I4c0I4c0I4c0", stored, KEY_LENGTH_AT)
  if string.byte(stored, TOKEN_LENGTH_AT) >= EXTRAS_FLAG then
    local _, _, after = struct.unpack("<" .. EXTRAS, stored, next)
    next = after
  end
  return next - 1
end

-- Transitions read the job's first HEAD_READ bytes, not the whole string: the packed
-- attributes are usually ~200 bytes, and a big body should not be copied into Lua at
-- every step. A prefix longer than that (a long custom status) takes a second, whole read.
local HEAD_READ = 1024
local HEAD_READ_LAST = offset(HEAD_READ - 1)

-- The job (attributes, not its body), or nil if it does not exist. `job._stored` may be
-- only the head of the stored string (`job._whole` false); storeJob reads the rest when
-- it needs the body.
local function loadJob(tag, id)
  local key = jobKey(tag, id)
  local head = redis.call("GETRANGE", key, OFFSET_0, HEAD_READ_LAST)
  if head == "" then return nil end -- GETRANGE of a missing key
  local ok, job = pcall(unpackJob, id, head)
  if not ok then
    job = unpackJob(id, redis.call("GET", key))
    job._whole = true
  else
    job._whole = #head < HEAD_READ
  end
  job._key = key
  return job
end

-- Writes a loaded job back: the new prefix over the old one when it has the same length,
-- else prefix and body (the new `body`, or the stored one) as a new string.
local function storeJob(tag, job, body)
  local meta = packJob(job)
  local key = jobKey(tag, job.id)
  job._meta = meta
  if not body and #meta == job._size then
    redis.call("SETRANGE", key, OFFSET_0, meta)
    return
  end
  if not body and not job._whole then job._stored = redis.call("GET", key) end
  job._stored = meta .. (body or string.sub(job._stored, job._size + 1))
  job._size = #meta
  job._whole = true
  redis.call("SET", key, job._stored)
end

-- The job as the store's reply: ONE string per job (every reply element costs the client
-- a decoded object): "<id> " followed by the stored string. codec.ts decodes it.
local function packRecord(id, stored)
  return id .. " " .. stored
end

-- The reply for a loaded job without its body (read with its head only: see loadJob): its
-- packed attributes, then the body's length as a little-endian double (codec.ts reads it
-- as bodySize), so a caller can bound what reading the bodies would cost.
local function recordWithoutBody(job)
  local stored = job._whole and #job._stored or redis.call("STRLEN", job._key)
  return packRecord(job.id, string.sub(job._stored, 1, job._size) .. struct.pack("<d", stored - job._size))
end

-- nil for a job that does not exist.
local function record(tag, id)
  local stored = redis.call("GET", jobKey(tag, id))
  if not stored then return nil end
  return packRecord(id, stored)
end
