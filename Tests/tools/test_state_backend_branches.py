"""No part of the bridge branches on which state backend it runs with (issue 26, item 3): `state.backend` is read in
one place, `StateBackends.make` (Sources/BridgeCore/State/StateBackends.swift), which picks `LocalStateBackend` or
`SharedStateBackend`; the runtime, the sinks and the commands ask the backend they were given (`StateBackend`,
`TermState`, `SinkState`, `WebhookDeadLetterPlace`) and never test which one it is.

The Swift sources are scanned as text, with comments and string literals removed, for the predicates the branches
were written with before: comparing or switching on `.backend`, matching a `.shared` case, testing an optional
shared state for nil, casting to a backend's concrete type, or reaching the bucket or the state files directly from
outside the backends. Config decoding (Sources/BridgeConfig) validates `state.backend` itself and is exempt.
"""
from __future__ import annotations

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
SOURCES = REPOSITORY / "Sources"
FACTORY = Path("Sources/BridgeCore/State/StateBackends.swift")
BACKENDS = Path("Sources/BridgeCore/State")
EXEMPT = (Path("Sources/BridgeConfig"),)

# (predicate, where it may appear besides the factory: a folder, or None for nowhere)
PREDICATES: list[tuple[re.Pattern[str], Path | None]] = [
    (re.compile(r"\.backend\s*[!=]=|switch\s+[\w.]*\.backend\b|\bbackend\s*==\s*\.(?:local|jetstream)"), None),
    (re.compile(r"\bcase\s+(?:let\s+)?\.shared\b"), None),
    (re.compile(r"\bshared\w*\s*[!=]=\s*nil|\bshared\w*(?:\?\.|\.map\s*\{)|\blet\s+shared\w*\s*[{,]"), None),
    (re.compile(r"\b(?:as[?!]?|is)\s+(?:CursorDatabase|SharedCursorBackend|SharedSinkState|LocalSinkState|"
                r"SharedDeadLetterFiler|LocalWebhookDeadLetters|LocalStateBackend|SharedStateBackend)\b"), None),
    (re.compile(r"\bSharedSinkState\s*\("), BACKENDS),
    (re.compile(r"\bSharedBucketAccess\s*\.\s*withBucket\b"), BACKENDS),
    (re.compile(r"\b(?:LocalStateReader|SharedStateReader)\s*\("), BACKENDS),
]

COMMENT_OR_STRING = re.compile(r'//[^\n]*|"""[\s\S]*?"""|"(?:\\.|[^"\\\n])*"')


def code_of(text: str) -> str:
    """The Swift text without comments and string literals (a string's interpolations go too: messages only)."""
    return COMMENT_OR_STRING.sub(lambda match: "\n" * match.group(0).count("\n"), text)


def branches(relative: Path, text: str) -> list[str]:
    """`path:line: code` for each backend predicate in a file at `relative` (from the repository root)."""
    if relative == FACTORY or any(relative.is_relative_to(folder) for folder in EXEMPT):
        return []
    found = []
    lines = code_of(text).split("\n")
    for number, line in enumerate(lines, start=1):
        for pattern, allowed in PREDICATES:
            if allowed is not None and relative.is_relative_to(allowed):
                continue
            if pattern.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_source_file_branches_on_the_state_backend():
    found = []
    for path in sorted(SOURCES.rglob("*.swift")):
        relative = path.relative_to(REPOSITORY)
        found += branches(relative, path.read_text())
    assert not found, "branches on the state backend outside StateBackends.make:\n" + "\n".join(found)


def test_the_scan_finds_each_kind_of_branch_it_replaced():
    # The shapes the backend choice was tested with before StateBackend (issue 26's review), one per line.
    former = [
        "let outcome = config.state.backend == .jetstream ? a : b",
        "if case .shared = cursors, delivery.mode != .activity {",
        "if case .shared(let backend) = cursors {",
        "sharedLetters: context.sharedState.map { shared in",
        "if let sharedLetters { takeInReplays() }",
        "if loop.recount, let sharedLetters { takeInReplays() }",
        "self.sharedState = sharedState ?? SharedSinkState()",
        "components.sharedState?.begin(term)",
        "return (stores, backend as? CursorDatabase)",
        "stored = try await SharedBucketAccess.withBucket(state) { _, _ in 1 }",
        "let place = stored.sharedState == nil ? a : b",
        "switch config.state.backend {",
    ]
    relative = Path("Sources/BridgeSinks/Webhook/Example.swift")
    assert len(branches(relative, "\n".join(former))) == len(former)


def test_comments_strings_the_factory_and_the_backends_own_work_pass():
    text = '\n'.join([
        "/// With `state.backend: jetstream` the letters go to the bucket (config.state.backend == .jetstream).",
        'print("state.backend: jetstream needs activity mode")',
        "let state = StateBackends.make(config)",
    ])
    assert branches(Path("Sources/BridgeApp/Example.swift"), text) == []
    assert branches(FACTORY, "switch config.state.backend {") == []
    assert branches(BACKENDS / "SharedStateBackend.swift", "try await SharedBucketAccess.withBucket(state) {") == []
    assert branches(Path("Sources/BridgeConfig/Decoding/Example.swift"), "guard config.backend == .jetstream") == []
