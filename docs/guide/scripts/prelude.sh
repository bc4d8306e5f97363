# Sourced by every walkthrough script: `latscope` is the installed binary, or $LATSCOPE
# when the test suite runs the scripts; results land in $OUT (default: the current dir).
set -eu
# The project's samples/ directory, for walkthroughs on real captures.
SAMPLES=${SAMPLES:-$(cd "$(dirname "$0")/../../../samples" && pwd)}
if [ -n "${LATSCOPE:-}" ]; then latscope() { "$LATSCOPE" "$@"; }; fi
mkdir -p "${OUT:-.}" && cd "${OUT:-.}"
