#!/usr/bin/env bash
# Runs every reproducer in this folder with PYTHON (default python3), one line each:
#   REPRODUCED (exit 1) | fixed (exit 0) | not run (exit 2: no GPU, or another error) | ? (anything else)
# Usage: docs/findings/run_all.sh [PYTHON]   (on a GPU machine the GPU paths run too)
# Exit 1 if any defect reproduced, else 0.
PYTHON="${1:-python3}"
cd "$(dirname "$0")" || exit 4
reproduced=0
for script in *.py; do
    output="$(timeout 300 "$PYTHON" "$script" 2>&1)"
    status=$?
    last="$(printf '%s\n' "$output" | grep -v '^\s*$' | tail -n 1)"
    case $status in
        1) word="REPRODUCED"; reproduced=$((reproduced + 1)) ;;
        0) word="fixed" ;;
        2) word="not run" ;;
        *) word="? exit $status" ;;
    esac
    printf '%-12s %-34s %s\n' "$word" "${script%.py}" "$last"
done
echo "run_all: $reproduced reproduced ($("$PYTHON" -c 'import importlib.metadata as m; print("DSL", m.version("nvidia-cutlass-dsl"))' 2>/dev/null))"
[ "$reproduced" -eq 0 ]
