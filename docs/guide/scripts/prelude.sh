# Sourced by every walkthrough script: `latscope` is the installed binary, or $LATSCOPE
# when the test suite runs the scripts; results land in $OUT (default: the current dir).
set -eu
if [ -n "${LATSCOPE:-}" ]; then latscope() { "$LATSCOPE" "$@"; }; fi
mkdir -p "${OUT:-.}" && cd "${OUT:-.}"
