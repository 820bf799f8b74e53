#!/usr/bin/env bash
# Rebuilds the viewer into dist/ and fails when the committed dist/ differs from the build: the
# committed viewer can never be stale. A release build of the same sources is byte-identical
# across checkouts, so any difference means dist/ was not rebuilt after a change.
#
#   .ci/check-dist.sh        # from anywhere; needs .ci/install-viewer-tools.sh first
set -euo pipefail
cd "$(dirname "$0")/.."

(cd viewer && trunk build --release --offline)

if ! git diff --exit-code --stat -- dist || [ -n "$(git status --porcelain --untracked-files=all -- dist)" ]; then
    git status --short -- dist >&2
    echo "error: dist/ is stale: the viewer built from these sources differs from the committed dist/." >&2
    echo "       Rebuild it with 'cd viewer && trunk build --release --offline' and commit dist/." >&2
    exit 1
fi
echo "dist/ matches the build of viewer/"
