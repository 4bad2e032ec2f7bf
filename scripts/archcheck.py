#!/usr/bin/env python3
"""Report the package's import graph: cycles (imports inside functions included), private names
imported across modules, and the count of top-level modules. Imports under ``if TYPE_CHECKING:``
are left out: type checkers read them, the running program never does. Prints figures; exits 0."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else "src/rubriclab")
pkg = root.name


def modname(p: Path) -> str:
    rel = p.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


mods = {modname(p): p for p in root.rglob("*.py")}


def resolve(cur: str, is_pkg: bool, level: int, target: str | None) -> str:
    base = cur.split(".")
    if not is_pkg:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


edges: dict[str, set[str]] = {m: set() for m in mods}
private: list[str] = []
inner = total = 0
for m, p in mods.items():
    tree = ast.parse(p.read_text())
    is_pkg = p.name == "__init__.py"
    func_nodes = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for n in ast.walk(f)
    }
    # imports under `if TYPE_CHECKING:` are for type checkers only: no runtime edge
    typing_only = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, ast.If)
        and (
            (isinstance(f.test, ast.Name) and f.test.id == "TYPE_CHECKING")
            or (isinstance(f.test, ast.Attribute) and f.test.attr == "TYPE_CHECKING")
        )
        for stmt in f.body
        for n in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        targets: list[tuple[str, list[str]]] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                t = resolve(m, is_pkg, node.level, node.module)
            elif node.module and node.module.split(".")[0] == pkg:
                t = node.module
            else:
                continue
            names = [a.name for a in node.names]
            targets.append((t, names))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == pkg:
                    targets.append((a.name, []))
        for t, names in targets:
            total += 1
            if id(node) in func_nodes:
                inner += 1
            dest = t
            for n in names:
                if f"{t}.{n}" in mods:
                    dest_sub = f"{t}.{n}"
                    if dest_sub != m:
                        edges[m].add(dest_sub)
                elif (
                    n.startswith("_")
                    and not n.startswith("__")
                    and t in mods
                    and not t.split(".")[-1].startswith("_")
                ):
                    private.append(f"{m} imports {t}.{n}")
            while dest and dest not in mods:
                dest = dest.rsplit(".", 1)[0] if "." in dest else ""
            if dest and dest != m and not (names and all(f"{t}.{n}" in mods for n in names)):
                edges[m].add(dest)


# cycles between modules (ignoring the package __init__ lazy exports)
def sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    index = 0
    stack: list[str] = []
    on: set[str] = set()
    idx: dict[str, int] = {}
    low: dict[str, int] = {}
    out: list[list[str]] = []
    sys.setrecursionlimit(10000)

    def strong(v: str) -> None:
        nonlocal index
        idx[v] = low[v] = index
        index += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in idx:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in idx:
            strong(v)
    return out


g = {m: {d for d in ds if d != pkg} for m, ds in edges.items() if m != pkg}
cycles = sccs(g)
top = sorted(p.stem for p in root.glob("*.py") if p.stem not in {"__init__", "__main__"})
print(f"top-level modules: {len(top)}")
print(f"intra-package imports: {total}, inside functions: {inner} ({inner / max(total, 1):.0%})")
print(f"private names imported across modules: {len(private)}")
for line in private:
    print("  ", line)
print(f"import cycles (strongly connected groups): {len(cycles)}")
for c in cycles:
    print("  ", " <-> ".join(c))
