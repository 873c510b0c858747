-- `ss lsp` against Neovim's built-in LSP client (0.7, Debian bookworm), by
-- hand: nvim_check.sh runs
--   nvim --headless -u NONE FILE -c 'luafile tests/lsp/nvim_check.lua'
-- with SS_BINARY (the `ss` to start) and SS_DEVICES (initializationOptions'
-- device list, optional) in the environment. It waits for the diagnostics
-- of FILE, asks for a hover on the value_and_grad line and on `batch`, a
-- definition of `forward`, breaks the file (an incremental change), fixes
-- it, stops the server and prints what it saw, then quits (exit 1 on a
-- timeout).
local function say(...)
  io.stdout:write(table.concat({ ... }, " ") .. "\n")
end

local failures = 0
local function expect(ok, what)
  if not ok then
    failures = failures + 1
    say("FAILED: " .. what)
  end
end

-- Only errors in the LSP log of the user's cache folder (ctest runs this).
vim.lsp.set_log_level("error")

local buf = vim.api.nvim_get_current_buf()
local published = 0
local last = nil
local exit_code = nil
local init = nil
if (os.getenv("SS_DEVICES") or "") ~= "" then init = { devices = os.getenv("SS_DEVICES") } end

local id = vim.lsp.start_client({
  name = "ss",
  cmd = { os.getenv("SS_BINARY") or "ss", "lsp" },
  root_dir = vim.fn.expand("%:p:h"),
  init_options = init,
  handlers = {
    ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
      published = published + 1
      last = result
      vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
    end,
  },
  on_exit = function(code, signal) exit_code = code end,
})
vim.lsp.buf_attach_client(buf, id)

local function wait_for(n, what)
  if not vim.wait(10000, function() return published >= n end, 20) then
    say("TIMEOUT waiting for " .. what)
    vim.cmd("cquit 1")
  end
end

local function show_diagnostics(title)
  say("== diagnostics " .. title .. ": " .. #last.diagnostics)
  for _, d in ipairs(last.diagnostics) do
    say(string.format("  %d:%d-%d:%d %s %s", d.range.start.line,
      d.range.start.character, d.range["end"].line, d.range["end"].character,
      tostring(d.code), (d.message:gsub("\n", " | "))))
  end
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    say(string.format("  vim.diagnostic: lnum %d col %d %s", d.lnum, d.col,
      (d.message:gsub("\n", " | "))))
  end
end

-- The (0-based) position of the first match of [pattern] in the buffer.
local function find(pattern, delta)
  for l, text in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local c = text:find(pattern, 1, true)
    if c then return l - 1, c - 1 + (delta or 0) end
  end
  error("not in the buffer: " .. pattern)
end

-- The result of [method] at [pattern] (nil when none came).
local function ask(method, pattern, delta)
  local line, col = find(pattern, delta)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = line, character = col },
  }
  local res = vim.lsp.buf_request_sync(buf, method, params, 10000)
  local r = res and res[id]
  say(string.format("== %s at %d:%d (%s)", method, line, col, pattern))
  if not r then say("  no answer") return nil end
  if r.err then say("  error: " .. vim.inspect(r.err)) return nil end
  if method == "textDocument/hover" then
    say(r.result and r.result.contents.value or "  null")
  else
    say("  " .. vim.inspect(r.result, { newline = " ", indent = "" }))
  end
  return r.result
end

local function has(s, part)
  return s ~= nil and s:find(part, 1, true) ~= nil
end

wait_for(1, "the first diagnostics")
show_diagnostics("on open")
expect(#last.diagnostics == 0, "the README example checks clean")
local several = (os.getenv("SS_DEVICES") or "") == "cpu[0 1 2]"
local h = ask("textDocument/hover", "value_and_grad(loss")
expect(h and has(h.contents.value, "value_and_grad("), "value_and_grad's hover")
if several then
  expect(h and has(h.contents.value, "In all: 813,072 bytes (794 KiB)."),
    "the seed's block on the value_and_grad line")
end
h = ask("textDocument/hover", "batch: [b] Digit)")
expect(h and has(h.contents.value, "batch: [b] Digit"), "batch's type")
if several then
  expect(h and has(h.contents.value, "(22/21/21 for a batch of 64)"),
    "batch's layout")
end
local d = ask("textDocument/definition", "forward(m, batch")
local fl, fc = find("fn forward(", 3)
expect(d and d.uri == vim.uri_from_bufnr(buf) and d.range.start.line == fl
  and d.range.start.character == fc, "forward's definition")

-- Break it: `batch.img` becomes `batch.imgx` (Neovim sends the change).
local line, col = find("forward(m, batch.img)", #"forward(m, batch.img")
vim.api.nvim_buf_set_text(buf, line, col, line, col, { "x" })
wait_for(2, "the diagnostics of the change")
show_diagnostics("after the change")
expect(#last.diagnostics == 1 and last.diagnostics[1].code == "E0203"
  and last.diagnostics[1].range.start.line == line,
  "E0203 for batch.imgx")
vim.api.nvim_buf_set_text(buf, line, col, line, col + 1, { "" })
wait_for(3, "the diagnostics of the fix")
show_diagnostics("after the fix")
expect(#last.diagnostics == 0, "the diagnostics cleared")

vim.lsp.stop_client(id)
vim.wait(5000, function() return exit_code ~= nil end, 20)
say("== server exit code: " .. tostring(exit_code))
expect(exit_code == 0, "shutdown and exit: code 0")
say(failures == 0 and "== all as expected" or ("== " .. failures .. " failed"))
vim.cmd(failures == 0 and "qa!" or "cquit 1")
