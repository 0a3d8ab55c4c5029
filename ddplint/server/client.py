"""A minimal LSP client over a child process's stdio, for the tests and the latency benchmark.

    with Session([sys.executable, "-m", "ddplint", "server"], root) as session:
        session.open(uri, text)
        diagnostics = session.diagnostics(uri)

It speaks JSON-RPC with Content-Length framing, answers the server's own requests with null,
and on exit sends shutdown and exit and waits for the process (killing it if it hangs).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from ddplint.core.lines import split_lines


class Session:
    def __init__(self, command: list[str], root: str | Path, *, initialization_options: dict | None = None) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: queue.Queue[dict] = queue.Queue()
        self.notifications: list[dict] = []
        self._next_id = 0
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self._stderr.extend(self.process.stderr), daemon=True).start()  # type: ignore[arg-type]
        self.versions: dict[str, int] = {}
        try:
            self.capabilities = self.request(
                "initialize",
                {
                    "processId": None,
                    "rootUri": Path(root).resolve().as_uri(),
                    "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
                    "initializationOptions": initialization_options or {},
                },
            )["capabilities"]
            self.notify("initialized", {})
        except BaseException:
            self.close()  # never leave a server behind
            raise

    # -- framing -------------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                return
            message = json.loads(stream.read(length))
            if "method" in message and "id" in message:  # a request from the server
                self._send({"id": message["id"], "result": None})
            self.messages.put(message)

    # -- requests and notifications ------------------------------------------------------

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        self._next_id += 1
        ident = self._next_id
        self._send({"id": ident, "method": method, "params": params})
        message = self._wait(lambda m: m.get("id") == ident and "method" not in m, timeout)
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return message.get("result")

    def _wait(self, predicate, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no answer from the server; its stderr: {b''.join(self._stderr)[-2000:]!r}")
            try:
                message = self.messages.get(timeout=remaining)
            except queue.Empty:
                continue
            if "method" in message and "id" not in message:
                self.notifications.append(message)
            if predicate(message):
                return message

    def wait_notification(self, method: str, predicate=lambda params: True, timeout: float = 60) -> dict:
        """The params of the next notification `method` for which `predicate` holds."""
        return self._wait(lambda m: m.get("method") == method and predicate(m.get("params")), timeout)["params"]

    # -- documents ----------------------------------------------------------------------

    def open(self, uri: str, text: str) -> None:
        self.versions[uri] = 1
        item = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": item})

    def change(self, uri: str, text: str) -> int:
        """Replace the whole text; returns the new version."""
        self.versions[uri] += 1
        document = {"uri": uri, "version": self.versions[uri]}
        self.notify("textDocument/didChange", {"textDocument": document, "contentChanges": [{"text": text}]})
        return self.versions[uri]

    def diagnostics(self, uri: str, version: int | None = None, timeout: float = 60) -> list[dict]:
        """The next diagnostics published for `uri` (for `version`, if given)."""
        params = self.wait_notification(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == uri and (version is None or p.get("version") == version),
            timeout,
        )
        return params["diagnostics"]

    # -- shutting down ------------------------------------------------------------------

    def close(self) -> int:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
        except (OSError, TimeoutError, RuntimeError):
            pass
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()
        finally:
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def apply_text_edits(text: str, edits: list[dict]) -> str:
    """Apply LSP TextEdits (positions in UTF-16 code units, as negotiated by default)."""
    lines = split_lines(text, keepends=True) or [""]

    def offset(position: dict) -> int:
        line = position["line"]
        if line >= len(lines):
            return len(text)
        before = sum(len(item) for item in lines[:line])
        units, index = position["character"], 0
        current = lines[line]
        while units > 0 and index < len(current):
            units -= 2 if ord(current[index]) > 0xFFFF else 1
            index += 1
        return before + index

    spans = sorted(((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text
