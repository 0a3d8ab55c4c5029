"""`ddplint server`: a Language Server over stdio (needs the `server` extra: pygls, lsprotocol).

Editors start it and speak JSON-RPC on its stdin and stdout; see the README for VS Code,
Neovim and Helix. It publishes ddplint's findings as diagnostics and offers their fixes and
`# noqa` comments as code actions.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print("usage: ddplint server\n\nRun the ddplint language server on stdin and stdout (for editors).")
        return 0
    if argv and argv != ["--stdio"]:
        print(f"ddplint: error: server takes no arguments (got {' '.join(argv)})", file=sys.stderr)
        return 2
    try:
        from ddplint.server.lsp import build_server
    except ImportError as error:
        print(
            f"ddplint: error: the language server needs pygls and lsprotocol ({error}); "
            'install them with: pip install "ddplint[server]"',
            file=sys.stderr,
        )
        return 2
    build_server().start_io()
    return 0
