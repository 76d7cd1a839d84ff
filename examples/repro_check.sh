#!/usr/bin/env bash
# The reproducers' GPU check (docs/reproducers.md): a run of examples/repro_drill.py (one red
# case of each kind) writes a reproducer per failing case; each runs alone, in a folder outside
# the repo where the harness cannot be imported (the environment keeps only what finds torch and
# the DSL), and must fail with the class the harness saw; each, pointed at a correct kernel (the
# predicated stage), must conform. Prints one line per check; exits 1 if any failed.
#
#   examples/repro_check.sh [PYTHON]        # PYTHON: the interpreter with torch and the DSL (default python3)
set -u
PY=$(command -v "${1:-python3}")
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
CORRECT="$REPO/fixtures/dsl/kernels/predicated.py:predicated_apply"
bad=0
check() { if [ "$1" = ok ]; then echo "ok   $2"; else echo "FAIL $2"; bad=1; fi; }

(cd "$REPO" && "$PY" -m pytest examples/repro_drill.py -n 2 -p no:randomly --require-gpu \
    --report-dir "$WORK/run" --repro-dir "$WORK/repro" -q) > "$WORK/pytest.log" 2>&1
status=$?
check "$([ $status -eq 1 ] && echo ok)" "the drill fails (exit $status; log $WORK/pytest.log)"
scripts=("$WORK"/repro/*.py)
check "$([ ${#scripts[@]} -eq 5 ] && [ -e "${scripts[0]}" ] && echo ok)" "5 reproducers written (${#scripts[@]})"
grep -q "python -m reports repro" "$WORK/run/summary.md"
check "$([ $? -eq 0 ] && echo ok)" "summary.md lists the repro commands"

mkdir -p "$WORK/outside" && cd "$WORK/outside" || exit 1
"$PY" -c "import fixtures" 2>/dev/null
check "$([ $? -ne 0 ] && echo ok)" "the harness cannot be imported where the scripts run"
for script in "${scripts[@]}"; do
    [ -e "$script" ] || continue
    name=$(basename "$script")
    case_id=$(sed -n "s/^SPEC = {'case': '\([^']*\)'.*/\1/p" "$script")
    saw=$(sed -n "s/^ 'failure': '\([^']*\)'.*/\1/p" "$script")
    out=$("$PY" "$script" 2>&1); rc=$?
    check "$([ $rc -eq 1 ] && [ "${out%%:*}" = "$saw" ] && echo ok)" "$name alone: exit $rc, '$(echo "$out" | tail -1 | cut -c1-160)' (harness saw $saw)"
    out=$("$PY" "$script" --kernel "$CORRECT" 2>&1); rc=$?
    check "$([ $rc -eq 0 ] && [ "$out" = "$case_id: conforms" ] && echo ok)" "$name --kernel predicated: exit $rc, '$(echo "$out" | tail -1 | cut -c1-160)'"
done
one=$(sed -n "s/^SPEC = {'case': '\([^']*\)'.*/\1/p" "${scripts[0]}")
(cd "$REPO" && "$PY" -m reports repro "$WORK/run" "$one" --out "$WORK/again.py") > /dev/null
cmp -s "$WORK/again.py" "${scripts[0]}"
check "$([ $? -eq 0 ] && echo ok)" "python -m reports repro writes the same script as --repro-dir"
echo "work folder: $WORK"
exit $bad
