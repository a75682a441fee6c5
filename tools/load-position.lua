-- wrk script: GET /api/v1/position for boards read from a file, one per line, taken in
-- turn by each wrk thread from a different starting point (tools/load-test.sh runs it).
-- The file is named by the environment variable BOARDS.
local boards = {}
local i = 0

function setup(thread)
  thread:set("offset", math.random(1, 1000000))
end

function init(args)
  local name = os.getenv("BOARDS") or "boards.txt"
  for line in io.lines(name) do
    if #line > 0 then boards[#boards + 1] = line end
  end
  if #boards == 0 then error("no boards in " .. name) end
  i = (offset or 0) % #boards
end

function request()
  i = i % #boards + 1
  return wrk.format("GET", "/api/v1/position?board=" .. boards[i])
end

function done(summary, latency, requests)
  io.write(string.format("requests %d, errors: connect %d, read %d, write %d, status %d, timeout %d\n",
    summary.requests, summary.errors.connect, summary.errors.read, summary.errors.write,
    summary.errors.status, summary.errors.timeout))
  io.write(string.format("latency p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n",
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000))
end
