"""``pyhip exec --check``: the program runs with ``PYHIP_CHECK`` set (its embedded pyhip turns the checks on and
writes each report to a JSON-lines log as it is found); this process reads the log when it exits, prints the
summary and makes the exit status non-zero when anything was found."""
from __future__ import annotations

import json
import os
import sys
import tempfile

from . import parse, summarize


def checked(run, program: str, args: list[str], spec: str, log: str | None) -> int:
    checks = parse(spec)                     # bad names fail here, before the program starts
    fd, tmp = tempfile.mkstemp(prefix="pyhip-check-", suffix=".jsonl")
    os.close(fd)
    saved = {k: os.environ.get(k) for k in ("PYHIP_CHECK", "PYHIP_CHECK_LOG", "PYHIP_CHECK_SUMMARY")}
    os.environ.update(PYHIP_CHECK=",".join(checks), PYHIP_CHECK_LOG=tmp, PYHIP_CHECK_SUMMARY="0")
    try:
        try:
            rc = run(program, args)
        except FileNotFoundError as exc:
            print(f"pyhip exec: {exc}", file=sys.stderr)
            return 127
        with open(tmp, encoding="utf-8") as f:
            text = f.read()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        os.unlink(tmp)
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    reports = [r for r in lines if "totals" not in r]
    totals = next((r["totals"] for r in reversed(lines) if "totals" in r), None)   # how often each was seen
    if totals is None or len(totals) != len(reports):
        totals = None
    if log:                                  # each report with how often it was seen
        with open(log, "w", encoding="utf-8") as f:
            f.writelines(json.dumps({**r, "count": totals[i] if totals else 1}) + "\n" for i, r in enumerate(reports))
    print(summarize(reports, totals), file=sys.stderr, flush=True)
    rc = 128 - rc if rc < 0 else rc
    return rc if rc else (1 if reports else 0)
