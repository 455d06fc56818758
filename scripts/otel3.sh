#!/usr/bin/env bash
# The OpenTelemetry JS 3.x lane. The main package-lock.json holds the 2.x line (Node 20 and up);
# compat/otel3/ holds the same package.json but for @opentelemetry/api 1.10 (which 3.x needs) and
# a lock file resolved on Node >= 22.15, where npm prefers the 3.x releases by their `engines`.
#
#   scripts/otel3.sh lock       regenerate compat/otel3/ after a change of package.json's dependencies
#   scripts/otel3.sh check      fail when compat/otel3/package.json's dependencies are not what `lock` would write
#   scripts/otel3.sh prepare    print a directory holding this checkout's files (tracked and new, not
#                               ignored) with compat/otel3/'s package files and their `npm ci`, for
#                               running the suites there (the lock decides, not the running node)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
node24=24.22.3 # the runtime that resolves the lock; any >= 22.15 resolves the same

# package.json with the 3.x line's @opentelemetry/api pinned for development.
generate() {
  node -e '
    const p = JSON.parse(require("fs").readFileSync("package.json", "utf8"));
    p.devDependencies["@opentelemetry/api"] = "1.10.0";
    process.stdout.write(JSON.stringify(p, null, 2) + "\n");'
}

case "${1:-}" in
  lock)
    bin=$(scripts/node-runtime.sh "$node24")
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    generate > "$work/package.json"
    # A fresh resolution on Node 24, as a user's `npm install` would make it.
    (cd "$work" && PATH="$bin:$PATH" npm install --package-lock-only --no-audit --no-fund --ignore-scripts >/dev/null)
    lines=$(node -e '
      const lock = require(process.argv[1]);
      // What taskjourney and its exporters load (a dev tool such as mockotlpserver may nest its own).
      const found = Object.entries(lock.packages).filter(([path]) => /^node_modules\/@opentelemetry\/.*@opentelemetry\/(core|sdk-trace|sdk-metrics|resources)$|^node_modules\/@opentelemetry\/(core|sdk-trace|sdk-metrics|resources)$/.test(path));
      const wrong = found.filter(([, p]) => !p.version.startsWith("3."));
      if (wrong.length) { console.error("not 3.x:", wrong.map(([path, p]) => path + "@" + p.version).join(", ")); process.exit(1); }
      console.log(found.length);' "$work/package-lock.json")
    cp "$work/package.json" "$work/package-lock.json" compat/otel3/
    echo "compat/otel3: lock written ($lines OpenTelemetry SDK packages, all 3.x)"
    ;;
  check)
    # Only what the lock resolves must agree; exports, scripts and the rest come from package.json
    # itself at `prepare`, so editing them needs no new lock.
    if ! generate | node -e '
      const fs = require("fs");
      const pick = (p) => JSON.stringify(["dependencies", "devDependencies", "peerDependencies", "optionalDependencies", "overrides"].map((k) => p[k] ?? null));
      const now = JSON.parse(fs.readFileSync(0, "utf8"));
      const locked = JSON.parse(fs.readFileSync("compat/otel3/package.json", "utf8"));
      process.exit(pick(now) === pick(locked) ? 0 : 1);'; then
      echo "compat/otel3/package.json is stale: package.json's dependencies changed. Run scripts/otel3.sh lock and commit compat/otel3/." >&2
      exit 1
    fi
    ;;
  prepare)
    "$0" check
    key=$(cat compat/otel3/package-lock.json | sha256sum | cut -c1-16)
    dir=${TASKJOURNEY_CACHE:-$HOME/.cache/taskjourney}/otel3/$(echo "$repo" | sha256sum | cut -c1-12)
    mkdir -p "$dir"
    # This checkout's files, fresh each time; node_modules kept while the lock is the same.
    find "$dir" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done |
      tar --null -T - -cf - | tar -xf - -C "$dir"
    generate > "$dir/package.json"
    cp compat/otel3/package-lock.json "$dir/"
    if [ "${CI:-}" = true ] || [ "$(cat "$dir/node_modules/.otel3-lock" 2>/dev/null)" != "$key" ]; then
      (cd "$dir" && npm ci --no-audit --no-fund >&2 && echo "$key" > node_modules/.otel3-lock)
    fi
    echo "$dir"
    ;;
  *)
    echo "usage: scripts/otel3.sh lock|check|prepare" >&2
    exit 2
    ;;
esac
