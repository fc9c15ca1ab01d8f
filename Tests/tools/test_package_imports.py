"""Package.swift declares exactly the dependencies each target imports (issue 26): a declared target that no file of
the target imports is a layer edge that is not there, and an imported one that is not declared builds only by the
luck of another target's dependencies (SwiftPM finds transitive modules) until the graph changes.

Package.swift is read as text: every `.target(`, `.executableTarget(`, `.testTarget(` call, and the C libraries made
by `cLibrary(` or `.systemLibrary(`. An executable target may be declared without an import: it is a dependency only
so that its binary is built first (BridgeCLI for the integration tests, which run it).
"""
from __future__ import annotations

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]

KINDS = {".target": "library", ".executableTarget": "executable", ".testTarget": "test"}
CALL = re.compile(r"(\.target|\.executableTarget|\.testTarget|\.systemLibrary|cLibrary)\(")
IMPORT = re.compile(r"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(\w+)", re.M)


def call_arguments(text: str, open_paren: int) -> str:
    """The text between the parenthesis at `open_paren` and its match (no parentheses inside string literals)."""
    depth = 0
    for index in range(open_paren, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return text[open_paren + 1:index]
    raise ValueError("unbalanced parentheses in Package.swift")


def read_package(root: Path) -> tuple[dict[str, dict], set[str]]:
    """The Swift targets (name → kind, directory, declared dependencies) and the names of the C library targets."""
    text = re.sub(r"//[^\n]*", "", (root / "Package.swift").read_text())
    targets, c_libraries = {}, set()
    for match in CALL.finditer(text):
        if match.start() > 0 and (text[match.start() - 1].isalnum() or text[match.start() - 1] == "_"):
            continue  # `func cLibrary(` and the like
        arguments = call_arguments(text, match.end() - 1)
        if match.group(1) in ("cLibrary", ".systemLibrary"):
            name = re.search(r'(?:name:\s*)?"(\w+)"', arguments)
            if name:
                c_libraries.add(name.group(1))
            continue
        name = re.search(r'name:\s*"(\w+)"', arguments)
        if not name:
            continue
        kind = KINDS[match.group(1)]
        dependencies = re.search(r"dependencies:\s*\[(.*?)\]", arguments, re.S)
        path = re.search(r'path:\s*"([^"]+)"', arguments)
        directory = path.group(1) if path else f'{"Tests" if kind == "test" else "Sources"}/{name.group(1)}'
        targets[name.group(1)] = {
            "kind": kind,
            "directory": root / directory,
            "dependencies": set(re.findall(r'"(\w+)"', dependencies.group(1))) if dependencies else set(),
        }
    return targets, c_libraries


def imported_modules(directory: Path, known: set[str]) -> set[str]:
    """The package's modules that the Swift files under `directory` import."""
    modules = set()
    for source in directory.rglob("*.swift"):
        text = re.sub(r"/\*.*?\*/", "", source.read_text(), flags=re.S)
        modules.update(name for name in IMPORT.findall(text) if name in known)
    return modules


def differences(root: Path) -> list[str]:
    """One line per target whose declared dependencies differ from its imports."""
    targets, c_libraries = read_package(root)
    known = set(targets) | c_libraries
    executables = {name for name, target in targets.items() if target["kind"] == "executable"}
    problems = []
    for name, target in sorted(targets.items()):
        imported = imported_modules(target["directory"], known)
        declared = target["dependencies"]
        undeclared = sorted(imported - declared - {name})
        unused = sorted(declared - imported - executables)
        if undeclared:
            problems.append(f"{name} imports but does not declare {', '.join(undeclared)}")
        if unused:
            problems.append(f"{name} declares but does not import {', '.join(unused)}")
    return problems


def test_package_swift_declares_exactly_what_each_target_imports():
    targets, _ = read_package(REPOSITORY)
    assert len(targets) >= 30, f"Package.swift read wrongly: only {sorted(targets)}"
    assert differences(REPOSITORY) == []


def write_package(root: Path, package: str, sources: dict[str, str]) -> None:
    (root / "Package.swift").write_text(package)
    for path, text in sources.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


PACKAGE = """// swift-tools-version:6.0
import PackageDescription
func cLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}
let package = Package(name: "p", targets: [
    cLibrary("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
    .target(name: "Low", dependencies: ["CZlib"]),
    .target(name: "High", dependencies: [%s]),  // "Low" in a comment is not a dependency
    .executableTarget(name: "Tool", dependencies: ["High"]),
    .testTarget(name: "HighTests", dependencies: ["High", "Tool"]),
])
"""
SOURCES = {
    "Sources/Low/Low.swift": "internal import CZlib\n",
    "Sources/High/High.swift": "import Foundation\n@preconcurrency import Low\n/* import Tool */\n",
    "Sources/Tool/main.swift": "import High\n",
    "Tests/HighTests/HighTests.swift": "@testable import High\n",
}


def test_a_matching_package_has_no_differences(tmp_path: Path):
    write_package(tmp_path, PACKAGE % '"Low"', SOURCES)
    assert differences(tmp_path) == []


def test_an_import_that_is_not_declared_is_reported(tmp_path: Path):
    write_package(tmp_path, PACKAGE % "", SOURCES)
    assert differences(tmp_path) == ["High imports but does not declare Low"]


def test_a_declared_dependency_that_is_not_imported_is_reported(tmp_path: Path):
    write_package(tmp_path, PACKAGE % '"Low", "CZlib"', SOURCES)
    assert differences(tmp_path) == ["High declares but does not import CZlib"]
