"""The language server: documents in, diagnostics and code actions out.

One `Linter` lives as long as the server, so libcst and the rules are imported once and each
document keeps a `StatementCache` (an edit re-parses only the statements it touched). A change
to a document that has been quiet for DEBOUNCE_SECONDS is linted at once; changes that follow
within that interval are linted together once typing pauses for it. Open and save lint at once.
Configuration is read like the command line's, from the `[tool.ddplint]` nearest the file.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from importlib import metadata

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from ddplint import __version__

from ddplint.fixing import quickfix
from ddplint.core.diagnostics import Applicability, Diagnostic
from ddplint.commands.docs import RULES_MD, anchor
from ddplint.server.statements import StatementCache

DEBOUNCE_SECONDS = 0.03
SOURCE = "ddplint"
FIX_ALL_KIND = "source.fixAll.ddplint"


def docs_base() -> str | None:
    """Where the rules' documentation lives: the URL labelled "Rules" in the package metadata
    (`[project.urls]`) when it declares one, else docs/rules.md of the checkout ddplint runs
    from. None where there is neither (an installed wheel declares no such URL and holds no
    docs/): findings then carry no link rather than a broken one."""
    try:
        for entry in metadata.metadata("ddplint").get_all("Project-URL") or ():
            label, _, url = entry.partition(",")
            if label.strip().lower() == "rules":
                return url.strip()
    except metadata.PackageNotFoundError:
        pass
    return RULES_MD.as_uri() if RULES_MD.is_file() else None


def related(step) -> types.DiagnosticRelatedInformation:
    """A step of a finding's chain, for the editor: a click on it goes to the wrapping, the
    spawn, the save (ddplint.core.diagnostics.Step)."""
    position = types.Position(step.line - 1, step.col - 1)
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=Path(os.path.abspath(step.path)).as_uri(), range=types.Range(position, position)),
        message=f"{step.kind.value}: {step.message}",
    )


@dataclass
class Linted:
    """The findings for one version of a document, paired with what the client was sent."""

    version: int | None
    source: str
    findings: list[tuple[Diagnostic, types.Diagnostic]] = field(default_factory=list)


class Linter:
    """Lints documents with the configuration that applies to their paths."""

    def __init__(self) -> None:
        from ddplint.rules import all_rules

        all_rules()  # import libcst and every rule now, not on the first keystroke
        self._settings: dict[str, tuple] = {}
        self._caches: dict[str, StatementCache] = {}
        self.docs = docs_base()
        # The project model of each root (ddplint.model.project), built on first use from the files
        # as saved, and dropped when one of its modules is saved: the CLI and flake8 see the
        # same cross-module facts. The open document itself is analysed as typed.
        self._projects: dict[str, object] = {}
        # The editor's workspace folders: the project of a file under one with no marker
        # (pyproject.toml, setup.cfg, setup.py, .git) above the file, as flake8's folder is.
        self.workspace_folders: list[str] = []
        self._views: dict[str, tuple] = {}  # path -> what project_view found for it

    def settings(self, path: str):
        from ddplint.engine.config import ConfigError, resolve

        folder = os.path.dirname(os.path.abspath(path))
        if folder not in self._settings:
            try:
                settings = resolve(start=folder)
                self._settings[folder] = (settings, settings.choose_rules(), None)
            except ConfigError as error:  # lint with the defaults and say why, once
                settings = resolve(isolated=True)
                self._settings[folder] = (settings, settings.choose_rules(), str(error))
        return self._settings[folder]

    def forget_settings(self) -> None:
        self._settings.clear()
        self._views.clear()

    def project_view(self, path: str):
        """(the file's view of its project, or None; a problem building it, or None). Files
        not saved under a folder (an untitled buffer) are linted alone, as with stdin. Found
        once per file until the next open or save (a keystroke does not look for its root)."""
        if path not in self._views:
            self._views[path] = self._project_view(path)
        return self._views[path]

    def _project_view(self, path: str):
        from ddplint.core.switches import SwitchError, env_switch
        from ddplint.model.project import build

        try:
            alone, no_cache = env_switch("DDPLINT_NO_PROJECT"), env_switch("DDPLINT_NO_CACHE")
        except SwitchError as error:  # said once; the project is then built, without its cache
            alone, no_cache, problem = False, True, f"{error}; the project's cache is not used"
        else:
            problem = None
        if alone or not os.path.isfile(path):
            return None, problem
        root = self.root_of(path)
        project = self._projects.get(root)
        if project is None:
            try:
                project = build(root, None if no_cache else os.path.join(root, ".ddplint_cache"))
                project.program  # built now, so that a bug in it is reported here
            except Exception as error:  # a bug in the index: lint the file alone, say so once
                self._projects[root] = False
                return None, f"internal error in the project index ({type(error).__name__}: {error}); files are checked alone"
            self._projects[root] = project
            # The model lives until a save: keep the collector from scanning it again and again.
            # A full collection over a 1,300-file project's model took ~100 ms, every few edits.
            gc.collect()
            gc.freeze()
        return (project.view(path) if project else None), problem

    def root_of(self, path: str) -> str:
        from ddplint.model.project import root_seen_from

        inside = [folder for folder in self.workspace_folders if path.startswith(folder.rstrip(os.sep) + os.sep)]
        return root_seen_from(path, max(inside, key=len) if inside else None)

    def forget_project(self, path: str) -> None:
        """A module was saved: the next lint builds its project again (from the cache, for the
        modules that did not change)."""
        self._projects.pop(self.root_of(path), None)
        self._views.clear()
        gc.unfreeze()  # the old model can be collected; the next build freezes what is live then

    def lint(self, uri: str, path: str, source: str) -> tuple[list[Diagnostic], str | None]:
        """(findings, problem): a problem is a config error or a file that cannot be checked."""
        settings, rules, problem = self.settings(path)
        cache = self._caches.setdefault(uri, StatementCache())
        view, index_problem = self.project_view(path)
        problem = problem or index_problem
        collecting = gc.isenabled()
        # The collector stays out of a lint: a lint makes and drops a few hundred thousand
        # objects, nearly all freed as they go, and the collections their churn set off cost
        # 5-7 % of an edit (one over the whole of the open file's trees every 20 edits). The
        # few cycles a lint leaves are collected by the first collection after it.
        gc.disable()
        try:
            return self._lint(path, source, settings, rules, cache, view, problem)
        finally:
            if collecting:
                gc.enable()

    def _lint(self, path, source, settings, rules, cache, view, problem) -> tuple[list[Diagnostic], str | None]:
        from ddplint.engine.lint import MAX_PARSE_CHARS, RuleCrash, SourceError, analyse

        try:
            facts = cache.facts(source)
            if facts is None and len(source) <= MAX_PARSE_CHARS:  # CPython cannot parse it: can libcst?
                cache(source)  # SourceError where not, as a full lint would find; else kept for analyse
            analysis = analyse(source, path, settings.rules_for(path, rules), facts=facts, parser=cache, project=view)
        except SourceError:
            return [], problem  # a half-typed line: the editor's Python support reports it
        except RuleCrash as error:
            return [], f"{path}: {error}"
        except Exception as error:  # a bug in ddplint: say so once, keep serving
            return [], f"{path}: internal error: {type(error).__name__}: {error}"
        return analysis.diagnostics, problem

    def fix_all(self, path: str, source: str) -> str:
        """What `ddplint --fix` would make of the buffer: the same call, with the same view of
        the project (a fix that rests on another module, such as DDP003's set_epoch for a
        sampler a helper builds, is found only with it)."""
        from ddplint.api import Mode, process_source

        settings, rules, _ = self.settings(path)
        view, _ = self.project_view(path)
        result = process_source(source, path, settings.rules_for(path, rules), Mode(fix=True, write=False), project=view)
        return result.fixed_source if result.fixed_source is not None else source

    def close(self, uri: str) -> None:
        self._caches.pop(uri, None)

    def code_description(self, diagnostic: Diagnostic) -> types.CodeDescription | None:
        """The link to the rule's section of its documentation, if that can be found."""
        return None if self.docs is None else types.CodeDescription(href=f"{self.docs}#{anchor(diagnostic)}")


class DdplintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ddplint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.linter = Linter()
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.last_lint: dict[str, float] = {}  # when each document was last linted (monotonic)
        self.debounce = DEBOUNCE_SECONDS
        self.reported: set[str] = set()  # problems already shown to the user

    def lint_now(self, uri: str) -> Linted:
        document = self.workspace.get_text_document(uri)
        source = document.source
        diagnostics, problem = self.linter.lint(uri, document.path or uri, source)
        if problem and problem not in self.reported:
            self.reported.add(problem)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"ddplint: {problem}"))
        linted = Linted(document.version, source, [(d, self.to_lsp(document, d)) for d in diagnostics])
        self.linted[uri] = linted
        self.last_lint[uri] = time.monotonic()
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=document.version, diagnostics=[lsp for _, lsp in linted.findings])
        )
        return linted

    def current(self, uri: str) -> Linted:
        """The findings for the document as it is now (linting it if a change is pending)."""
        document = self.workspace.get_text_document(uri)
        linted = self.linted.get(uri)
        if linted is None or linted.source != document.source:
            self.cancel(uri)
            linted = self.lint_now(uri)
        return linted

    def schedule(self, uri: str) -> None:
        """Lint after a change: at once when the document has been quiet for the debounce
        interval (a single edit is answered without waiting), else once typing pauses."""
        quiet = time.monotonic() - self.last_lint.get(uri, 0.0) > self.debounce
        if quiet and uri not in self.pending:
            self.lint_now(uri)
            return
        self.cancel(uri)

        async def later() -> None:
            await asyncio.sleep(self.debounce)
            self.pending.pop(uri, None)
            self.lint_now(uri)

        self.pending[uri] = asyncio.ensure_future(later())

    def cancel(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()

    def to_lsp(self, document: TextDocument, diagnostic: Diagnostic) -> types.Diagnostic:
        fix = diagnostic.fix
        return types.Diagnostic(
            range=self.client_range(document, diagnostic.line, diagnostic.col, diagnostic.end_line, diagnostic.end_col),
            message=diagnostic.message + (f" [{fix.applicability.value} fix]" if fix else ""),
            severity=types.DiagnosticSeverity.Warning,
            code=diagnostic.code,
            code_description=self.linter.code_description(diagnostic),
            source=SOURCE,
            related_information=[related(step) for step in diagnostic.chain] or None,
        )

    @staticmethod
    def client_range(document: TextDocument, line: int, col: int, end_line: int, end_col: int) -> types.Range:
        server = ServerTextRange(ServerTextPosition(line - 1, col - 1), ServerTextPosition(end_line - 1, end_col - 1))
        return document.range_to_client_units(server)

    def text_edit(self, document: TextDocument, old: str, new: str) -> types.WorkspaceEdit:
        start, end, text = quickfix.changed_span(old, new)
        edit = types.TextEdit(
            range=types.Range(document.client_position_at_offset(start), document.client_position_at_offset(end)),
            new_text=text,
        )
        return types.WorkspaceEdit(changes={document.uri: [edit]})

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        document = self.workspace.get_text_document(uri)
        linted = self.current(uri)
        only = params.context.only
        wanted = lambda kind: not only or any(kind == k or kind.startswith(f"{k}.") for k in only)  # noqa: E731
        actions: list[types.CodeAction] = []
        path = document.path or uri
        for diagnostic, lsp in linted.findings:
            if not _overlaps(lsp.range, params.range):
                continue
            fix = diagnostic.fix
            if fix is not None and wanted(types.CodeActionKind.QuickFix):
                unsafe = fix.applicability is Applicability.UNSAFE
                actions.append(
                    types.CodeAction(
                        title=f"ddplint: fix {diagnostic.code} ({diagnostic.name}){' (unsafe)' if unsafe else ''}",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp],
                        is_preferred=not unsafe,
                        edit=self.text_edit(document, linted.source, quickfix.apply_fix(linted.source, diagnostic)),
                    )
                )
            silenced = quickfix.with_noqa(linted.source, diagnostic) if wanted(types.CodeActionKind.QuickFix) else None
            if silenced is not None and silenced != linted.source:  # (unchanged: no comment can reach it)
                actions.append(
                    types.CodeAction(
                        title=f"ddplint: add `# noqa: {diagnostic.code}`",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp],
                        edit=self.text_edit(document, linted.source, silenced),
                    )
                )
        safe = [lsp for d, lsp in linted.findings if d.fix and d.fix.applicability is Applicability.SAFE]
        if safe and wanted(FIX_ALL_KIND):
            fixed = self.linter.fix_all(path, linted.source)
            if fixed != linted.source:
                actions.append(
                    types.CodeAction(
                        title="ddplint: fix all safe fixes",
                        kind=FIX_ALL_KIND,
                        diagnostics=safe,
                        edit=self.text_edit(document, linted.source, fixed),
                    )
                )
        return actions


def _overlaps(a: types.Range, b: types.Range) -> bool:
    key = lambda p: (p.line, p.character)  # noqa: E731
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def build_server() -> DdplintServer:
    server = DdplintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: DdplintServer, params: types.InitializeParams) -> None:
        options = params.initialization_options or {}
        if isinstance(options, dict) and isinstance(options.get("debounce"), (int, float)):
            ls.debounce = max(0.0, float(options["debounce"]))
        folders = [folder.uri for folder in params.workspace_folders or ()] or [params.root_uri]
        ls.linter.workspace_folders = [to_fs_path(uri) for uri in folders if uri and uri.startswith("file:")]

    # Configuration is read again on open and save (not on each change): an edited
    # pyproject.toml applies from the next file opened or saved.
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DdplintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.linter.forget_settings()
        ls.lint_now(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DdplintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DdplintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.linter.forget_settings()
        if uri.endswith("/pyproject.toml"):
            return
        document = ls.workspace.get_text_document(uri)
        if document.path and document.path.endswith((".py", ".pyi")):
            # What this module hands the others may have changed their findings too.
            ls.linter.forget_project(document.path)
            for other in list(ls.linted):
                if other != uri:
                    ls.schedule(other)
        ls.cancel(uri)
        ls.lint_now(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DdplintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.cancel(uri)
        ls.linted.pop(uri, None)
        ls.linter.close(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    def code_action(ls: DdplintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.code_actions(params)

    return server
