"""Parses Prometheus text exposition (format 0.0.4) from stdin with the official prometheus_client parser and
prints JSON: {"families": {name: {"type": t, "help": h, "samples": [{"name", "labels", "value"}]}}}.

Exits 1 with the parser's message on stderr when the text does not parse, so a test fails on malformed output.
"""
from __future__ import annotations

import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def main() -> int:
    text = sys.stdin.read()
    families = {}
    try:
        for family in text_string_to_metric_families(text):
            families[family.name] = {
                "type": family.type,
                "help": family.documentation,
                "samples": [
                    {
                        "name": sample.name,
                        "labels": dict(sample.labels),
                        "value": float(sample.value) if math.isfinite(sample.value) else str(sample.value),
                    }
                    for sample in family.samples
                ],
            }
    except Exception as error:  # the parser raises ValueError and friends on malformed text
        print(f"unparsable metrics: {error}", file=sys.stderr)
        return 1
    json.dump({"families": families}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
