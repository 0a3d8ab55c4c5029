-- A real editor session against `ddplint server`: open a file with a finding, wait for the
-- diagnostic, apply the quick fix of rule DDPLINT_CODE (default DDP004) through Neovim's own LSP
-- client, print what happened and the buffer after it. Works with Neovim 0.7 and newer. Run by
-- tests/test_editors.py:
--   DDPLINT_PYTHON=python3 DDPLINT_FILE=train.py nvim --headless -u NONE -c "luafile nvim_check.lua"
local function say(text) io.stdout:write(text .. "\n") end

-- With DDPLINT_USER_CONFIG set, the session was started with a user's init.lua (the README's
-- snippet), which must have attached ddplint to the buffer by itself.
local function attached(buf)
  for _, client in pairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
    if client.name == "ddplint" and vim.lsp.buf_is_attached(buf, client.id) then return client.id end
  end
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("DDPLINT_FILE")))
  local buf = vim.api.nvim_get_current_buf()
  local client_id
  if os.getenv("DDPLINT_USER_CONFIG") then
    vim.wait(10000, function() return attached(buf) ~= nil end, 50)
    client_id = attached(buf)
    if client_id == nil then error("the configuration attached no ddplint client to the buffer") end
    say("attached by the configuration")
  else
    client_id = vim.lsp.start_client({
      name = "ddplint",
      cmd = { os.getenv("DDPLINT_PYTHON"), "-m", "ddplint", "server" },
      root_dir = vim.fn.fnamemodify(os.getenv("DDPLINT_FILE"), ":p:h"),
    })
    vim.lsp.buf_attach_client(buf, client_id)
  end
  vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  local diagnostics = vim.diagnostic.get(buf)
  for _, d in ipairs(diagnostics) do
    say(string.format("diagnostic %s %d:%d %s", d.code or "?", d.lnum + 1, d.col + 1, d.source or ""))
  end
  if #diagnostics == 0 then error("no diagnostics") end
  local client = vim.lsp.get_client_by_id(client_id)
  say("server pid " .. tostring(client.rpc.pid or "?"))
  local d = diagnostics[1]
  local lsp_diagnostic = {  -- back to LSP's shape (vim.diagnostic keeps only part of it on 0.7)
    range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
    message = d.message, code = d.code, source = d.source,
  }
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, range = lsp_diagnostic.range,
                   context = { diagnostics = { lsp_diagnostic } } }
  local responses = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 30000) or {}
  for _, response in pairs(responses) do
    for _, action in ipairs(response.result or {}) do
      say("action " .. action.title)
      if action.title:find("fix " .. (os.getenv("DDPLINT_CODE") or "DDP004"), 1, true) then
        vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding or "utf-16")
      end
    end
  end
  say("line 3 after the fix: " .. vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1])
  for _, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do say("| " .. line) end
  vim.lsp.stop_client(client_id)
  vim.wait(10000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
  say("stopped " .. tostring(vim.lsp.get_client_by_id(client_id) == nil))
end)
if not ok then say("error " .. tostring(err)) end
vim.cmd("qa!")
