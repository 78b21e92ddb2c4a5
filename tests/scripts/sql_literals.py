#!/usr/bin/env python3
"""Every SQL statement is a string literal with bound parameters.

Fails when a database prepare() or exec() call (or the query helpers that
take SQL) gets anything but a string literal, a constant defined as a
literal, or one of the few expressions listed below that build SQL from no
data at all. Usage: tests/scripts/sql_literals.py [SOURCE_ROOT]"""
import pathlib
import re
import sys

if sys.argv[1:] == ["--self-test"]:
    # The check must catch SQL spliced from data.
    import subprocess, tempfile
    with tempfile.TemporaryDirectory() as tmp:
        bad = pathlib.Path(tmp, "schema", "bad.cpp")
        bad.parent.mkdir()
        bad.write_text('void f(Db* db_, std::string name) {\n' + '  db_->prepare("SELECT 1");\n' * 25 +
                       '  db_->prepare(("SELECT * FROM t WHERE x = \'" + name + "\'").c_str());\n}\n')
        run = subprocess.run([sys.executable, __file__, tmp], capture_output=True, text=True)
        if run.returncode == 0 or "bad.cpp:27" not in run.stdout:
            sys.exit("the check did not catch spliced SQL:\n" + run.stdout)
        print("self-test: spliced SQL is caught")
        sys.exit(0)
root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2])
# (A Beast buffer's prepare(), which takes a size, is not a database's.)
CALL = re.compile(r"(?<!buffer_\.)\b(?:prepare|exec|query_value<[^>]*>|query_texts)\(\s*(?:\*?db_?\s*,\s*)?", re.S)
# SQL made without data: the migration table, PRAGMA user_version = <integer>,
# transaction verbs, and the name of a helper's own SQL parameter.
ALLOWED = ("kMigrations[", "bump.c_str()", "kind == Kind::kWrite ?", "sql", "text.c_str()",
           "const char* sql")
failures = []
calls = 0
for path in sorted(root.glob("*/**/*.cpp")):
    if any(part in ("build", "build-asan", "build-fuzz", "tests", "bench", ".scratch") for part in path.parts):
        continue
    source = path.read_text()
    # Named literals: the file's own and those of the project headers it
    # includes (a room's shared statements).
    defining = source
    for header in re.findall(r'#include "([^"]+\.hpp)"', source):
        if (root / header).is_file():
            defining += (root / header).read_text()
    literals = set(re.findall(r"(k\w+)(?:\[\])?\s*=\s*(?:R\")?\"", defining))
    literals |= set(re.findall(r"const char\*\s*(?:const\s+)?(k\w+)\s*=\s*(?:\n\s*)?\"", defining))
    for match in CALL.finditer(source):
        arg = source[match.end():match.end() + 40]
        if arg.startswith(")"):  # a call without arguments (a method named alike)
            continue
        calls += 1
        name = re.match(r"\w+", arg)
        ok = arg.startswith('"') or arg.startswith('R"') or arg.startswith(ALLOWED) or (
            name is not None and name.group(0) in literals)
        if not ok:
            line = source[:match.start()].count("\n") + 1
            failures.append(f"{path.relative_to(root)}:{line}: SQL from {arg.splitlines()[0]!r}")
print(f"checked {calls} calls that take SQL")
for failure in failures:
    print("not a literal:", failure)
if calls < 20:
    sys.exit("found too few calls: the pattern no longer matches the code")
sys.exit(1 if failures else 0)
