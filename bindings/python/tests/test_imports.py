"""The package's modules import one another in one direction: every import, at module level or
inside a function, is an edge, and the graph has no cycle. (A cycle works until the day a name
is needed while the other module is half-initialised.)"""

import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parents[1] / "python" / "hyperseal"


def edges():
    out = {}
    for path in PKG.glob("*.py"):
        mod = path.stem
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name for a in node.names)
        out[mod] = {d for d in deps if (PKG / f"{d}.py").exists() and d != mod}
    return out


def test_no_module_imports_itself_through_another():
    graph = edges()
    state = {}

    def visit(mod, path):
        if state.get(mod) == "done":
            return
        assert state.get(mod) != "open", "import cycle: " + " -> ".join(path[path.index(mod):] + [mod])
        state[mod] = "open"
        for dep in sorted(graph.get(mod, ())):
            visit(dep, path + [mod])
        state[mod] = "done"

    for mod in sorted(graph):
        visit(mod, [])
