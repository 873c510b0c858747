-- `ss lsp` against Neovim's built-in LSP client (0.7, Debian bookworm), by
-- hand: nvim_check.sh runs
--   nvim --headless -u NONE FILE -c 'luafile tests/lsp/nvim_check.lua'
-- with SS_BINARY (the `ss` to start) and SS_DEVICES (initializationOptions'
-- device list, optional) in the environment. It waits for the diagnostics
-- of FILE, asks for a hover on the value_and_grad line and on `batch`, a
-- definition of `forward`, references, signature help and the outline,
-- renames a local, unformats a line and formats the file, breaks the file
-- (an incremental change) and applies the quick fix, stops the server and
-- prints what it saw, then quits (exit 1 on a timeout).
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

-- Issue 30's requests, answered to Neovim's own client and applied with
-- its own functions.
local rl, rc = find("logits = forward")
local refs = vim.lsp.buf_request_sync(buf, "textDocument/references", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = rl, character = rc },
  context = { includeDeclaration = true } }, 10000)
refs = refs and refs[id].result
say("== references of logits: " .. (refs and #refs or 0))
expect(refs and #refs == 3, "logits: its declaration and two uses")
local sig = ask("textDocument/signatureHelp", "batch.img), batch.label")
expect(sig and sig.signatures[1].label ==
  "fn forward(m: Mlp, x: [b D]) -> [b C]" and sig.activeParameter == 1,
  "forward's signature, at its second parameter")
local syms = vim.lsp.buf_request_sync(buf, "textDocument/documentSymbol",
  { textDocument = { uri = vim.uri_from_bufnr(buf) } }, 10000)
expect(syms and #syms[id].result == 12, "the outline's 12 declarations")

local ws = vim.lsp.buf_request_sync(buf, "workspace/symbol",
  { query = "trs" }, 10000)
expect(ws and #ws[id].result == 1 and ws[id].result[1].name == "train_step",
  "workspace symbols: train_step for `trs`")

local function line_of(pattern)
  local l = find(pattern)
  return vim.api.nvim_buf_get_lines(buf, l, l + 1, false)[1]
end

-- Rename logits to scores (Neovim applies the WorkspaceEdit).
local l0, c0 = find("logits = forward")
local ren = vim.lsp.buf_request_sync(buf, "textDocument/rename", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = l0, character = c0 }, newName = "scores" }, 10000)
vim.lsp.util.apply_workspace_edit(ren[id].result, "utf-16")
wait_for(2, "the diagnostics of the rename")
expect(#last.diagnostics == 0 and has(line_of("argmax("), "argmax(scores,"),
  "renamed everywhere, still clean")

-- Unformat a line; Neovim's formatting request lays it out again.
local fl0, fc0 = find("relu(x @ m.w1)", #"relu(x")
vim.api.nvim_buf_set_text(buf, fl0, fc0, fl0, fc0 + 3, { "@" })
wait_for(3, "the diagnostics of the unformatting")
expect(has(line_of("relu("), "relu(x@m.w1)"), "unformatted")
-- First a range that does not hold it: nothing changes there.
local other = find("fn loss(")
local rf = vim.lsp.buf_request_sync(buf, "textDocument/rangeFormatting", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = { start = { line = other, character = 0 },
            ["end"] = { line = other + 1, character = 0 } } }, 10000)
expect(rf and #rf[id].result == 0, "no edits for a range laid out already")
vim.lsp.buf.formatting_sync(nil, 10000)
expect(has(line_of("relu("), "relu(x @ m.w1) @ m.w2"), "formatted again")
wait_for(4, "the diagnostics of the formatting")

-- Break it: `batch.img` becomes `batch.imgx` (Neovim sends the change).
local line, col = find("forward(m, batch.img)", #"forward(m, batch.img")
vim.api.nvim_buf_set_text(buf, line, col, line, col, { "x" })
wait_for(5, "the diagnostics of the change")
show_diagnostics("after the change")
expect(#last.diagnostics == 1 and last.diagnostics[1].code == "E0203"
  and last.diagnostics[1].range.start.line == line,
  "E0203 for batch.imgx")
-- The quick fix its help line names, applied by Neovim.
local acts = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = last.diagnostics[1].range,
  context = { diagnostics = last.diagnostics } }, 10000)
local act = acts and acts[id].result and acts[id].result[1]
expect(act and act.title == "Change to `img`", "the quick fix offered")
vim.lsp.util.apply_workspace_edit(act.edit, "utf-16")
wait_for(6, "the diagnostics of the fix")
show_diagnostics("after the fix")
expect(#last.diagnostics == 0, "the diagnostics cleared")

vim.lsp.stop_client(id)
vim.wait(5000, function() return exit_code ~= nil end, 20)
say("== server exit code: " .. tostring(exit_code))
expect(exit_code == 0, "shutdown and exit: code 0")
say(failures == 0 and "== all as expected" or ("== " .. failures .. " failed"))
vim.cmd(failures == 0 and "qa!" or "cquit 1")
