#!/usr/bin/env bash
# The one test command: unit, integration and end-to-end suites. The end-to-end suite installs
# (cached) and starts the real backends itself, so a fresh machine needs nothing else.
# TASKJOURNEY_E2E=skip leaves the end-to-end suite out. The backends' ports are per machine, so two
# end-to-end runs must not overlap (CI runs them on each runtime, one after another).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci
# (Read as a file: 3.x packages do not export their package.json.)
echo "== npm test on node $(node --version), @opentelemetry/core $(node -p 'JSON.parse(require("fs").readFileSync("node_modules/@opentelemetry/core/package.json", "utf8")).version')"
npm run build
npx vitest run --project unit --project integration
if [ "${TASKJOURNEY_E2E:-}" = skip ]; then
  echo "== end-to-end suite skipped (TASKJOURNEY_E2E=skip)"
else
  npx vitest run --project e2e
fi
