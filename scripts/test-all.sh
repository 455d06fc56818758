#!/usr/bin/env bash
# The one test command: unit, integration and end-to-end suites. The end-to-end suite installs
# (cached) and starts the real backends itself, so a fresh machine needs nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci
npm run build
npx vitest run --project unit --project integration
npx vitest run --project e2e
