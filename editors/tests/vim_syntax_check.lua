-- The Vim syntax file against `ss`'s lexer (vim_syntax_check.sh): for each
-- token of the oracle file SS_TOKENS (`ss fmt --tokens` of the buffer's
-- file: LINE COLUMN LENGTH CLASS), the syntax group at its first byte must
-- be the class's: a keyword ssKeyword, a declaration word ssDeclaration, a
-- number ssNumber, a string ssString or ssFString, a comment ssComment;
-- and a name none of those. Prints each mismatch; exits 1 on any.
local want = {
  keyword = { ssKeyword = true },
  declaration = { ssDeclaration = true },
  number = { ssNumber = true },
  string = { ssString = true, ssFString = true },
  comment = { ssComment = true },
}
local lexical = {
  ssKeyword = true, ssDeclaration = true, ssNumber = true, ssString = true,
  ssFString = true, ssComment = true,
}
vim.cmd("syntax enable")
vim.cmd("set syntax=shapescript")
local bad, n = 0, 0
for line in io.lines(os.getenv("SS_TOKENS")) do
  local l, c, len, class = line:match("^(%d+) (%d+) (%d+) (%a+)$")
  l, c = tonumber(l), tonumber(c)
  local group = vim.fn.synIDattr(vim.fn.synID(l, c, 1), "name")
  local ok
  if class == "name" then ok = not lexical[group] else ok = want[class][group] end
  n = n + 1
  if not ok then
    bad = bad + 1
    local text = vim.api.nvim_buf_get_lines(0, l - 1, l, false)[1]
    io.stdout:write(string.format("%s:%d:%d: %s `%s` is in group '%s'\n",
      vim.fn.expand("%"), l, c, class, text:sub(c, c + len - 1), group))
  end
end
io.stdout:write(string.format("%s: %d tokens, %d wrong\n", vim.fn.expand("%"),
  n, bad))
vim.cmd(bad == 0 and "qa!" or "cquit 1")
