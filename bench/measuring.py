"""Helpers shared by the Python halves of the benchmarks in bench/ (imported, not run)."""


def percentile(values, p):
    """Nearest rank: the smallest value with at least p % of them at or below it."""
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * p // 100) - 1)]


def options(argv, names, fail):
    """`--name value` pairs, every one of `names` required; `fail(message)` on anything else."""
    values = {}
    while argv:
        flag = argv.pop(0)
        if not flag.startswith("--") or flag[2:] not in names or not argv:
            fail(f"bad argument {flag}")
        values[flag[2:]] = argv.pop(0)
    missing = [n for n in names if n not in values]
    if missing:
        fail("missing --" + ", --".join(missing))
    return values
