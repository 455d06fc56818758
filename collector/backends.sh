#!/usr/bin/env bash
# Local backends for taskjourney's end-to-end tests: an OpenTelemetry Collector built by
# ocb, Jaeger v2 (in-memory), Prometheus (Debian's package) and Zipkin (the zipkin-server exec
# jar from Maven Central, in-memory; its UI shows a trace where Jaeger built from Go source
# serves only a placeholder page), all on loopback.
#
#   collector/backends.sh install   build/install into the cache (idempotent, stamped)
#   collector/backends.sh start     start all four in the background, wait until ready
#   collector/backends.sh start --agent-gateway   also the agent + gateway layout of
#                                   agent-gateway/: two gateway collectors (tail sampling, export
#                                   to this Jaeger and Prometheus) and an agent routing to them
#   collector/backends.sh stop      stop them by PID (TERM, then KILL after a bound)
#   collector/backends.sh status    what runs (exit 0 only when all four are up and ready)
#   collector/backends.sh env       `export NAME='value'` lines for tests (--json: one object)
#   collector/backends.sh logs [collector|jaeger|prometheus|zipkin]   tail the logs
#   collector/backends.sh clean     stop, then delete the whole cache directory (refused while
#                                   another checkout's backends run from it)
#
# Exit codes: 0 ok; 1 failed (message and log tail on stderr); 2 usage error or a
# binary missing (run `install`). Progress goes to stderr; stdout carries only what a
# caller parses (`env`, `status --json`).
#
# Each checkout has its own run directory, PID files and ports (the binaries in the cache are
# shared): two checkouts on one machine never see or stop each other's processes.
#
# Environment (all optional):
#   TASKJOURNEY_CACHE    cache dir, default $HOME/.cache/taskjourney (collector/.cache without HOME)
#   TASKJOURNEY_RUN_DIR  logs, PID files, data; default $TASKJOURNEY_CACHE/runs/<checkout>-<hash>
#                        (<hash>: of this checkout's path)
#   TJ_PORT_OFFSET       added to every default port below; default 10 to 990 in steps of 10,
#                        from the checkout's path hash (0 gives the ports as listed)
#   TJ_BIND_HOST         default 127.0.0.1
#   TJ_OTLP_GRPC_PORT 14317, TJ_OTLP_HTTP_PORT 14318         collector OTLP in
#   TJ_COLLECTOR_HEALTH_PORT 13133                            collector health_check
#   TJ_PROM_EXPORTER_PORT 18889                               collector /metrics (pull; not scraped)
#   TJ_COLLECTOR_METRICS_PORT 18888                           collector's own telemetry (scraped)
#   TJ_JAEGER_OTLP_GRPC_PORT 24317, TJ_JAEGER_OTLP_HTTP_PORT 24318   Jaeger OTLP in
#   TJ_JAEGER_QUERY_PORT 26686, TJ_JAEGER_QUERY_GRPC_PORT 26685      Jaeger query API
#   TJ_PROMETHEUS_PORT 19090                                  Prometheus
#   TJ_ZIPKIN_PORT 19411                                      Zipkin: UI at /zipkin/, API, Zipkin JSON
#                        in at /api/v2/spans (OTEL_TRACES_EXPORTER=zipkin sends there)
#   TJ_ZIPKIN_HEAP 512m, TJ_ZIPKIN_MAX_SPANS 100000   Zipkin's Java heap (-Xmx) and the spans its
#                        in-memory store keeps (the oldest traces go first past it)
#   TJ_TRACES_FILE       default $TASKJOURNEY_RUN_DIR/traces.jsonl (collector file exporter)
#   TJ_TAIL_DECISION_WAIT 2s, TJ_TAIL_LATENCY_MS 1000, TJ_TAIL_SAMPLING_PERCENT 100
#   With start --agent-gateway (agent-gateway/agent.yaml + static-gateways.yaml, gateway.yaml):
#   TJ_AGENT_OTLP_GRPC_PORT 21001, TJ_AGENT_OTLP_HTTP_PORT 21002   agent OTLP in
#   TJ_AGENT_HEALTH_PORT 21003, TJ_AGENT_METRICS_PORT 21004         agent health_check, own metrics
#   TJ_GATEWAY_1_OTLP_GRPC_PORT 21005, TJ_GATEWAY_1_OTLP_HTTP_PORT 21006,
#   TJ_GATEWAY_1_HEALTH_PORT 21007, TJ_GATEWAY_1_METRICS_PORT 21008   gateway 1
#   TJ_GATEWAY_2_OTLP_GRPC_PORT 22105, TJ_GATEWAY_2_OTLP_HTTP_PORT 22106,
#   TJ_GATEWAY_2_HEALTH_PORT 22107, TJ_GATEWAY_2_METRICS_PORT 22108   gateway 2
#   TJ_GATEWAY_TAIL_DECISION_WAIT 5s, TJ_GATEWAY_TAIL_LATENCY_MS 2000,
#   TJ_GATEWAY_TAIL_SAMPLING_PERCENT 0 (only failed and slow traces are kept)
#   TJ_START_TIMEOUT 90 (s), TJ_STOP_TIMEOUT 10 (s)
#   TJ_LOCK_TIMEOUT 1800 (s): how long to wait for another caller's install (or this
#                        checkout's start/stop) to release its lock; reported every 30 s
#   TJ_PROMETHEUS_BIN    default: prometheus from PATH (Debian's /usr/bin/prometheus)
#   GO                   go binary, default: go from PATH, else /usr/local/go/bin/go
#   JAVA, MVN            java (>= 17) and mvn binaries, default: from PATH (Debian's packages)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
COMMAND="${1:-}"

# ---- pinned versions -----------------------------------------------------------------
OTELCOL_VERSION=v0.161.0   # ocb and every collector component (builder-config.yaml)
JAEGER_VERSION=v1.76.0     # github.com/jaegertracing/jaeger module (Jaeger v2 binary)
GO_MIN_VERSION=1.26.0      # collector v0.161.0 modules declare `go 1.26.0`
ZIPKIN_VERSION=3.6.1       # io.zipkin:zipkin-server:<version>:jar:exec (Maven Central); needs Java 17

# ---- layout --------------------------------------------------------------------------
# Without HOME (some CI sandboxes), fall back to collector/.cache (gitignored).
if [[ -n "${HOME:-}" ]]; then CACHE="${TASKJOURNEY_CACHE:-$HOME/.cache/taskjourney}"
else CACHE="${TASKJOURNEY_CACHE:-$HERE/.cache}"; fi
CHECKOUT="$(cd "$HERE/.." && pwd -P)"
# A short hash of the checkout's real path names its run directory and picks its ports, so
# that a second checkout (a git worktree, a CI copy) never shares a PID file or a port.
CHECKOUT_HASH="$(printf '%s' "$CHECKOUT" | sha256sum | cut -c1-8)"
CHECKOUT_NAME="$(basename "$CHECKOUT" | tr -c 'A-Za-z0-9._\n-' '_')"
RUN="${TASKJOURNEY_RUN_DIR:-$CACHE/runs/$CHECKOUT_NAME-$CHECKOUT_HASH}"
BIN="$CACHE/bin"
STAMPS="$CACHE/stamps"
OTELCOL_BIN="$BIN/otelcol-taskjourney"
JAEGER_BIN="$BIN/jaeger"
OCB_BIN="$BIN/builder"
ZIPKIN_JAR="$BIN/zipkin-server-exec.jar"

# ---- ports (exported: the collector and Jaeger configs read them) ---------------------
# `start` records the values it used in $RUN/started.env; while that file exists (until
# `stop`), they are the defaults here, so `env`, `status` and `stop` called without the
# caller's overrides still see the ports that are really in use.
STARTED_ENV="$RUN/started.env"
if [[ -f "$STARTED_ENV" ]]; then
  while IFS='=' read -r k v; do
    [[ "$k" =~ ^TJ_[A-Z0-9_]+$ && -z "${!k:-}" ]] && export "$k=$v"
  done <"$STARTED_ENV"
fi
# Offsets are multiples of 10 below 1000: the default ports differ from each other by 1, 201,
# 202 or more than 1000, so no port of one checkout is ever a port of another, and the highest
# (26686 + 990) stays below Linux's ephemeral range (32768+).
PORT_OFFSET="${TJ_PORT_OFFSET:-$(( (16#$CHECKOUT_HASH % 99 + 1) * 10 ))}"
[[ "$PORT_OFFSET" =~ ^[0-9]+$ ]] && (( PORT_OFFSET <= 30000 )) ||
  { printf '[backends] TJ_PORT_OFFSET must be a whole number from 0 to 30000, got "%s"\n' "$PORT_OFFSET" >&2; exit 2; }
port() { echo $(( $1 + PORT_OFFSET )); }
export TJ_BIND_HOST="${TJ_BIND_HOST:-127.0.0.1}"
export TJ_OTLP_GRPC_PORT="${TJ_OTLP_GRPC_PORT:-$(port 14317)}"
export TJ_OTLP_HTTP_PORT="${TJ_OTLP_HTTP_PORT:-$(port 14318)}"
export TJ_COLLECTOR_HEALTH_PORT="${TJ_COLLECTOR_HEALTH_PORT:-$(port 13133)}"
export TJ_PROM_EXPORTER_PORT="${TJ_PROM_EXPORTER_PORT:-$(port 18889)}"
export TJ_COLLECTOR_METRICS_PORT="${TJ_COLLECTOR_METRICS_PORT:-$(port 18888)}"
export TJ_JAEGER_OTLP_GRPC_PORT="${TJ_JAEGER_OTLP_GRPC_PORT:-$(port 24317)}"
export TJ_JAEGER_OTLP_HTTP_PORT="${TJ_JAEGER_OTLP_HTTP_PORT:-$(port 24318)}"
export TJ_JAEGER_QUERY_PORT="${TJ_JAEGER_QUERY_PORT:-$(port 26686)}"
export TJ_JAEGER_QUERY_GRPC_PORT="${TJ_JAEGER_QUERY_GRPC_PORT:-$(port 26685)}"
export TJ_PROMETHEUS_PORT="${TJ_PROMETHEUS_PORT:-$(port 19090)}"
export TJ_ZIPKIN_PORT="${TJ_ZIPKIN_PORT:-$(port 19411)}"
export TJ_ZIPKIN_HEAP="${TJ_ZIPKIN_HEAP:-512m}"
export TJ_ZIPKIN_MAX_SPANS="${TJ_ZIPKIN_MAX_SPANS:-100000}"
[[ "$TJ_ZIPKIN_HEAP" =~ ^[1-9][0-9]*[kKmMgG]?$ ]] ||
  { printf '[backends] TJ_ZIPKIN_HEAP must be a Java heap size such as 512m or 1g, got "%s"\n' "$TJ_ZIPKIN_HEAP" >&2; exit 2; }
[[ "$TJ_ZIPKIN_MAX_SPANS" =~ ^[1-9][0-9]*$ ]] ||
  { printf '[backends] TJ_ZIPKIN_MAX_SPANS must be a positive whole number, got "%s"\n' "$TJ_ZIPKIN_MAX_SPANS" >&2; exit 2; }
export TJ_TRACES_FILE="${TJ_TRACES_FILE:-$RUN/traces.jsonl}"
# The agent + gateway layout: at most ten ports per block of 1000, with distinct last digits
# (21001-21008), and the second gateway's more than 990 away from them, so the rule above holds.
export TJ_AGENT_OTLP_GRPC_PORT="${TJ_AGENT_OTLP_GRPC_PORT:-$(port 21001)}"
export TJ_AGENT_OTLP_HTTP_PORT="${TJ_AGENT_OTLP_HTTP_PORT:-$(port 21002)}"
export TJ_AGENT_HEALTH_PORT="${TJ_AGENT_HEALTH_PORT:-$(port 21003)}"
export TJ_AGENT_METRICS_PORT="${TJ_AGENT_METRICS_PORT:-$(port 21004)}"
export TJ_GATEWAY_1_OTLP_GRPC_PORT="${TJ_GATEWAY_1_OTLP_GRPC_PORT:-$(port 21005)}"
export TJ_GATEWAY_1_OTLP_HTTP_PORT="${TJ_GATEWAY_1_OTLP_HTTP_PORT:-$(port 21006)}"
export TJ_GATEWAY_1_HEALTH_PORT="${TJ_GATEWAY_1_HEALTH_PORT:-$(port 21007)}"
export TJ_GATEWAY_1_METRICS_PORT="${TJ_GATEWAY_1_METRICS_PORT:-$(port 21008)}"
export TJ_GATEWAY_2_OTLP_GRPC_PORT="${TJ_GATEWAY_2_OTLP_GRPC_PORT:-$(port 22105)}"
export TJ_GATEWAY_2_OTLP_HTTP_PORT="${TJ_GATEWAY_2_OTLP_HTTP_PORT:-$(port 22106)}"
export TJ_GATEWAY_2_HEALTH_PORT="${TJ_GATEWAY_2_HEALTH_PORT:-$(port 22107)}"
export TJ_GATEWAY_2_METRICS_PORT="${TJ_GATEWAY_2_METRICS_PORT:-$(port 22108)}"
export TJ_GATEWAY_TAIL_DECISION_WAIT="${TJ_GATEWAY_TAIL_DECISION_WAIT:-5s}"
export TJ_GATEWAY_TAIL_LATENCY_MS="${TJ_GATEWAY_TAIL_LATENCY_MS:-2000}"
export TJ_GATEWAY_TAIL_SAMPLING_PERCENT="${TJ_GATEWAY_TAIL_SAMPLING_PERCENT:-0}"
START_TIMEOUT="${TJ_START_TIMEOUT:-90}"
STOP_TIMEOUT="${TJ_STOP_TIMEOUT:-10}"
LOCK_TIMEOUT="${TJ_LOCK_TIMEOUT:-1800}"

H="$TJ_BIND_HOST"
COLLECTOR_HEALTH_URL="http://$H:$TJ_COLLECTOR_HEALTH_PORT/"
JAEGER_QUERY_URL="http://$H:$TJ_JAEGER_QUERY_PORT"
PROMETHEUS_URL="http://$H:$TJ_PROMETHEUS_PORT"
ZIPKIN_URL="http://$H:$TJ_ZIPKIN_PORT"

SERVICES=(zipkin prometheus jaeger collector)   # start order
AGENT_GATEWAY_SERVICES=(gateway-1 gateway-2 agent)   # start --agent-gateway, after SERVICES

log() { printf '[backends] %s\n' "$*" >&2; }
die() { printf '[backends] error: %s\n' "$*" >&2; exit 1; }
usage_die() { printf '[backends] %s\n' "$*" >&2; exit 2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Who has the lock file $1 open, other than us: "pid N (command, in directory)" per process,
# from /proc (works whatever script version holds it), or the owner note a holder left.
lock_holders() {
  local f="$1" fd pid cmd entry seen=" $$ $BASHPID " scripts=() others=() out joined
  while IFS= read -r fd; do
    pid="${fd#/proc/}"; pid="${pid%%/*}"
    [[ "$seen" == *" $pid "* ]] && continue
    seen+="$pid "
    cmd="$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | cut -c1-120 | sed 's/ $//')" || true
    [[ -n "$cmd" ]] || continue   # gone since, or a kernel thread
    entry="pid $pid ($cmd, in $(readlink "/proc/$pid/cwd" 2>/dev/null || echo '?'))"
    # The scripts first: a build's compilers inherit the lock too.
    if [[ "$cmd" == *backends.sh* ]]; then scripts+=("$entry"); else others+=("$entry"); fi
  done < <(find /proc/[0-9]*/fd -maxdepth 1 -lname "$f" 2>/dev/null 8>&- 9>&-)
  out=("${scripts[@]}" "${others[@]}")
  if [[ ${#out[@]} == 0 && -f "$f.owner" ]]; then out=("a process this user cannot see; the last holder noted: $(cat "$f.owner")"); fi
  [[ ${#out[@]} == 0 ]] && out=("a process this user cannot see")
  printf -v joined '%s; ' "${out[@]:0:4}"
  (( ${#out[@]} > 4 )) && joined+="and $(( ${#out[@]} - 4 )) more; "
  echo "${joined%; }"
}

# take_lock FD FILE WHAT: an exclusive flock on FILE through descriptor FD. When another
# caller holds it, says so at once (who, and for what we wait), every 30 s how long so far,
# and how long the wait was once over; gives up after TJ_LOCK_TIMEOUT seconds, naming the
# holder again.
take_lock() {
  local fd="$1" f="$2" what="$3" t waited
  mkdir -p "$(dirname "$f")"
  eval "exec $fd>\"\$f\""
  command -v flock >/dev/null 2>&1 || return 0
  if ! flock -n "$fd"; then
    t=$(now)
    log "waiting for $what: $f is held by $(lock_holders "$f")"
    while ! flock -w 30 "$fd"; do
      waited="$(elapsed "$t")"
      if awk -v w="$waited" -v m="$LOCK_TIMEOUT" 'BEGIN { exit !(w >= m) }'; then
        die "gave up waiting for $f after $waited s (TJ_LOCK_TIMEOUT=$LOCK_TIMEOUT); held by $(lock_holders "$f")"
      fi
      log "still waiting for $what after $waited s"
    done
    log "got $f after waiting $(elapsed "$t") s"
  fi
  printf 'pid %s (backends.sh %s from %s, since %s)\n' "$$" "$COMMAND" "$CHECKOUT" "$(date '+%F %T')" >"$f.owner"
}

# install (and clean) write the shared binaries: one caller at a time per cache directory.
with_cache_lock() { mkdir -p "$CACHE"; take_lock 9 "$CACHE/.lock" "another install of the shared binaries"; }
# start and stop touch only this checkout's processes: one caller at a time per run directory
# (parallel test workers of one checkout), never waiting for another checkout's build.
with_run_lock() { mkdir -p "$RUN"; take_lock 8 "$RUN/.lock" "another start/stop of this checkout's backends"; }

# ---- Go environment --------------------------------------------------------------------
# Everything Go writes stays in the cache dir: module cache (GOMODCACHE), build cache
# (GOCACHE), GOPATH. `rm -rf "$TASKJOURNEY_CACHE"` (or `clean`) resets it all; -modcacherw
# keeps the module cache deletable.
go_env() {
  if [[ -z "${GO:-}" ]]; then
    if command -v go >/dev/null 2>&1; then GO="$(command -v go)"
    elif [[ -x /usr/local/go/bin/go ]]; then GO=/usr/local/go/bin/go
    else die "no Go toolchain found (need go >= $GO_MIN_VERSION; set GO=/path/to/go)"; fi
  fi
  PATH="$(dirname "$GO"):$PATH"; export PATH
  export GOPATH="$CACHE/go"
  export GOMODCACHE="$CACHE/go/pkg/mod"
  export GOCACHE="$CACHE/go-build"
  export GOBIN="$BIN"
  export GOTOOLCHAIN=local
  export GOFLAGS="-trimpath -modcacherw -buildvcs=false"
  export CGO_ENABLED=0
  local v
  v="$("$GO" env GOVERSION)"; v="${v#go}"
  if [[ "$(printf '%s\n%s\n' "$GO_MIN_VERSION" "$v" | sort -V | head -n1)" != "$GO_MIN_VERSION" ]]; then
    die "Go $v is too old: collector $OTELCOL_VERSION needs go >= $GO_MIN_VERSION"
  fi
  GO_VERSION="$v"
}

file_sha() { sha256sum "$1" | cut -c1-16; }
stamp_ok() { [[ -f "$STAMPS/$1" && "$(cat "$STAMPS/$1")" == "$2" ]]; }
stamp_write() { mkdir -p "$STAMPS"; printf '%s' "$2" >"$STAMPS/$1"; }

# ---- install ---------------------------------------------------------------------------
prometheus_bin() {
  if [[ -n "${TJ_PROMETHEUS_BIN:-}" ]]; then echo "$TJ_PROMETHEUS_BIN"; return; fi
  command -v prometheus 2>/dev/null || { [[ -x /usr/bin/prometheus ]] && echo /usr/bin/prometheus; } || true
}

as_root() {
  if [[ "$(id -u)" == 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else die "need root (or sudo) to run: $*"; fi
}

disable_debian_prometheus_service() {
  # The package enables a `prometheus` service on 0.0.0.0:9090. We run our own process,
  # so keep the packaged one stopped and disabled.
  if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null 2>&1; then
    as_root systemctl disable --now prometheus.service >/dev/null 2>&1 || true
  elif [[ -x /etc/init.d/prometheus ]]; then
    if /etc/init.d/prometheus status >/dev/null 2>&1; then
      as_root /etc/init.d/prometheus stop >/dev/null 2>&1 || true
    fi
    command -v update-rc.d >/dev/null 2>&1 && as_root update-rc.d prometheus disable >/dev/null 2>&1 || true
  fi
}

install_prometheus() {
  local t; t=$(now)
  if [[ -z "$(prometheus_bin)" ]]; then
    command -v apt-get >/dev/null 2>&1 || die "prometheus not found and no apt-get: install Prometheus >= 2.40 or set TJ_PROMETHEUS_BIN"
    log "prometheus: apt-get install prometheus (Debian package)"
    # Keep the package's service from starting during the install: a policy-rc.d that
    # denies every start, unless the machine already has one.
    local made_policy=0
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
      as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
      made_policy=1
    fi
    local rc=0
    {
      as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus
    } >"$CACHE/apt-prometheus.log" 2>&1 || rc=$?
    [[ "$made_policy" == 1 ]] && as_root rm -f /usr/sbin/policy-rc.d
    if [[ "$rc" != 0 ]]; then tail -n 30 "$CACHE/apt-prometheus.log" >&2; die "apt-get install prometheus failed"; fi
  fi
  disable_debian_prometheus_service
  local p; p="$(prometheus_bin)"
  [[ -n "$p" ]] || die "prometheus still not found after install"
  log "prometheus: $("$p" --version 2>&1 | head -n1) ($(elapsed "$t") s)"
}

install_ocb() {
  local want="ocb $OTELCOL_VERSION go $GO_VERSION"
  if [[ -x "$OCB_BIN" ]] && stamp_ok ocb "$want"; then return; fi
  local t; t=$(now)
  log "ocb: go install go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION"
  if ! "$GO" install -ldflags="-s -w" "go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION" \
      >"$CACHE/build/ocb-install.log" 2>&1; then
    tail -n 40 "$CACHE/build/ocb-install.log" >&2
    die "go install of the collector builder failed (full log: $CACHE/build/ocb-install.log)"
  fi
  stamp_write ocb "$want"
  log "ocb: done ($(elapsed "$t") s)"
}

install_collector() {
  local want sha
  sha="$(file_sha "$HERE/builder-config.yaml")"
  want="otelcol $OTELCOL_VERSION manifest $sha go $GO_VERSION"
  if [[ -x "$OTELCOL_BIN" ]] && stamp_ok otelcol "$want"; then
    log "collector: up to date ($OTELCOL_BIN)"; return
  fi
  install_ocb
  local t; t=$(now)
  log "collector: ocb --config collector/builder-config.yaml (module download + build, several minutes cold)"
  mkdir -p "$CACHE/build"
  rm -rf "$CACHE/build/otelcol-taskjourney"
  # ocb runs `go mod tidy` and `go build -trimpath -ldflags="-s -w"` itself; the
  # manifest's relative output_path resolves against this working directory.
  if ! (cd "$CACHE/build" && "$OCB_BIN" --config "$HERE/builder-config.yaml") >"$CACHE/build/ocb.log" 2>&1; then
    tail -n 40 "$CACHE/build/ocb.log" >&2
    die "collector build failed (full log: $CACHE/build/ocb.log)"
  fi
  # Copy then rename: replacing a binary that is running must not fail ("text file busy").
  install -m 755 "$CACHE/build/otelcol-taskjourney/otelcol-taskjourney" "$OTELCOL_BIN.tmp"
  mv -f "$OTELCOL_BIN.tmp" "$OTELCOL_BIN"
  stamp_write otelcol "$want"
  log "collector: built $OTELCOL_BIN ($(elapsed "$t") s)"
}

JAEGER_MOD_DIR="$CACHE/build/jaeger-tool"
JAEGER_PREFETCH_PID=""

jaeger_want() { echo "jaeger $JAEGER_VERSION go $GO_VERSION"; }
jaeger_up_to_date() { [[ -x "$JAEGER_BIN" ]] && stamp_ok jaeger "$(jaeger_want)"; }

# `go get -tool` in a scratch module of its own, so that Jaeger's dependency versions
# (collector v0.140 line) are exactly its own and never mix with the v0.161 collector
# build. This step is mostly module download (network), so install runs it in the
# background while the collector compiles (CPU).
jaeger_prefetch() {
  rm -rf "$JAEGER_MOD_DIR"; mkdir -p "$JAEGER_MOD_DIR"
  (
    cd "$JAEGER_MOD_DIR" &&
    "$GO" mod init taskjourney.invalid/jaeger-tool &&
    "$GO" get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION"
  ) >"$CACHE/build/jaeger-get.log" 2>&1
}

start_jaeger_prefetch() {
  jaeger_up_to_date && return 0
  log "jaeger: go get -tool github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION (scratch module, in the background)"
  jaeger_prefetch 8>&- 9>&- &
  JAEGER_PREFETCH_PID=$!
}

install_jaeger() {
  if jaeger_up_to_date; then
    log "jaeger: up to date ($JAEGER_BIN)"; return
  fi
  local t; t=$(now)
  local rc=0
  if [[ -n "$JAEGER_PREFETCH_PID" ]]; then
    wait "$JAEGER_PREFETCH_PID" || rc=$?
    JAEGER_PREFETCH_PID=""
  else
    log "jaeger: go get -tool github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION (scratch module)"
    jaeger_prefetch || rc=$?
  fi
  if [[ "$rc" != 0 ]]; then
    tail -n 40 "$CACHE/build/jaeger-get.log" >&2
    die "jaeger: go get -tool failed (full log: $CACHE/build/jaeger-get.log)"
  fi
  log "jaeger: go build github.com/jaegertracing/jaeger/cmd/jaeger"
  if ! (
    cd "$JAEGER_MOD_DIR" &&
    "$GO" build -ldflags="-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$JAEGER_VERSION" \
      -o "$JAEGER_BIN.tmp" github.com/jaegertracing/jaeger/cmd/jaeger
  ) >"$CACHE/build/jaeger-build.log" 2>&1; then
    tail -n 40 "$CACHE/build/jaeger-build.log" >&2
    die "jaeger build failed (full log: $CACHE/build/jaeger-build.log)"
  fi
  mv -f "$JAEGER_BIN.tmp" "$JAEGER_BIN"
  stamp_write jaeger "$(jaeger_want)"
  log "jaeger: built $JAEGER_BIN ($(elapsed "$t") s after the collector)"
}

# Zipkin's server: the exec jar of io.zipkin:zipkin-server from Maven Central, fetched by Maven
# (dependency:copy) into a local repository inside the cache, so that `clean` removes it too.
java_bin() { if [[ -n "${JAVA:-}" ]]; then echo "$JAVA"; else command -v java 2>/dev/null || true; fi; }
java_major() { "$1" -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p'; }

install_zipkin() {
  local want="zipkin-server $ZIPKIN_VERSION"
  if [[ -f "$ZIPKIN_JAR" ]] && stamp_ok zipkin "$want"; then
    log "zipkin: up to date ($ZIPKIN_JAR)"; return
  fi
  local t java mvn major; t=$(now)
  java="$(java_bin)"
  [[ -n "$java" ]] || die "zipkin: no java found (need Java >= 17: apt-get install openjdk-17-jre-headless, or set JAVA)"
  major="$(java_major "$java")"
  [[ "$major" =~ ^[0-9]+$ ]] && (( major >= 17 )) || die "zipkin: $java is Java '${major:-?}'; zipkin-server $ZIPKIN_VERSION needs Java >= 17"
  mvn="${MVN:-$(command -v mvn 2>/dev/null || true)}"
  [[ -n "$mvn" ]] || die "zipkin: no mvn found (apt-get install maven, or set MVN)"
  log "zipkin: mvn dependency:copy io.zipkin:zipkin-server:$ZIPKIN_VERSION:jar:exec (~135 MB)"
  rm -rf "$CACHE/build/zipkin"; mkdir -p "$CACHE/build/zipkin"
  if ! JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$java")")")" "$mvn" -B -q \
      -Dmaven.repo.local="$CACHE/m2" \
      dependency:copy -Dartifact="io.zipkin:zipkin-server:$ZIPKIN_VERSION:jar:exec" \
      -DoutputDirectory="$CACHE/build/zipkin" </dev/null >"$CACHE/build/zipkin-mvn.log" 2>&1; then
    tail -n 40 "$CACHE/build/zipkin-mvn.log" >&2
    die "zipkin: Maven could not fetch io.zipkin:zipkin-server:$ZIPKIN_VERSION:jar:exec (full log: $CACHE/build/zipkin-mvn.log)"
  fi
  local jar="$CACHE/build/zipkin/zipkin-server-$ZIPKIN_VERSION-exec.jar"
  # A jar is a zip: a truncated or HTML answer saved under its name is caught here, not at start.
  [[ -f "$jar" && "$(head -c 2 "$jar")" == "PK" ]] || die "zipkin: $jar is missing or not a jar (log: $CACHE/build/zipkin-mvn.log)"
  # Copy then rename: a running server keeps the jar it opened.
  install -m 644 "$jar" "$ZIPKIN_JAR.tmp"
  mv -f "$ZIPKIN_JAR.tmp" "$ZIPKIN_JAR"
  # The jar is in bin/ now: Maven's copy of it need not stay (its plugins do, for the next version).
  rm -rf "$CACHE/build/zipkin" "$CACHE/m2/io/zipkin/zipkin-server"
  stamp_write zipkin "$want"
  log "zipkin: $ZIPKIN_JAR ($(elapsed "$t") s)"
}

cmd_install() {
  with_cache_lock
  local t; t=$(now)
  mkdir -p "$BIN" "$STAMPS" "$CACHE/build"
  go_env
  log "cache: $CACHE (go $GO_VERSION, GOMODCACHE=$GOMODCACHE, GOFLAGS=$GOFLAGS)"
  install_prometheus
  install_zipkin
  # A failed step must not leave the background `go get` running.
  trap '[[ -n "$JAEGER_PREFETCH_PID" ]] && kill "$JAEGER_PREFETCH_PID" 2>/dev/null; true' EXIT
  start_jaeger_prefetch
  install_collector
  install_jaeger
  trap - EXIT
  log "install complete ($(elapsed "$t") s)"
}

# ---- processes -------------------------------------------------------------------------
pid_file() { echo "$RUN/$1.pid"; }
log_file() { echo "$RUN/$1.log"; }
bin_of() {
  case "$1" in
    collector) echo "$OTELCOL_BIN" ;;
    jaeger) echo "$JAEGER_BIN" ;;
    prometheus) prometheus_bin ;;
    zipkin) java_bin ;;
    agent|gateway-*) echo "$OTELCOL_BIN" ;;
  esac
}

# PID of a running service from its PID file, checked against /proc so that a reused PID
# of some other program is never taken for ours. Prints nothing when not running.
running_pid() {
  local f pid exe
  f="$(pid_file "$1")"
  [[ -f "$f" ]] || return 0
  pid="$(cat "$f" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  exe="$(readlink "/proc/$pid/exe" 2>/dev/null || true)"
  case "$1" in
    collector|agent|gateway-*) [[ "$exe" == *otelcol-taskjourney* ]] || return 0 ;;
    jaeger) [[ "$exe" == */jaeger* ]] || return 0 ;;
    prometheus) [[ "$exe" == *prometheus* ]] || return 0 ;;
    zipkin) [[ "$exe" == */java* ]] && grep -q zipkin-server "/proc/$pid/cmdline" 2>/dev/null || return 0 ;;
  esac
  echo "$pid"
}

port_busy() { (exec 3<>"/dev/tcp/$H/$1") 2>/dev/null; }

ports_of() {
  case "$1" in
    collector) echo "$TJ_OTLP_GRPC_PORT $TJ_OTLP_HTTP_PORT $TJ_COLLECTOR_HEALTH_PORT $TJ_PROM_EXPORTER_PORT $TJ_COLLECTOR_METRICS_PORT" ;;
    jaeger) echo "$TJ_JAEGER_OTLP_GRPC_PORT $TJ_JAEGER_OTLP_HTTP_PORT $TJ_JAEGER_QUERY_PORT $TJ_JAEGER_QUERY_GRPC_PORT" ;;
    prometheus) echo "$TJ_PROMETHEUS_PORT" ;;
    zipkin) echo "$TJ_ZIPKIN_PORT" ;;
    agent) echo "$TJ_AGENT_OTLP_GRPC_PORT $TJ_AGENT_OTLP_HTTP_PORT $TJ_AGENT_HEALTH_PORT $TJ_AGENT_METRICS_PORT" ;;
    gateway-1) echo "$TJ_GATEWAY_1_OTLP_GRPC_PORT $TJ_GATEWAY_1_OTLP_HTTP_PORT $TJ_GATEWAY_1_HEALTH_PORT $TJ_GATEWAY_1_METRICS_PORT" ;;
    gateway-2) echo "$TJ_GATEWAY_2_OTLP_GRPC_PORT $TJ_GATEWAY_2_OTLP_HTTP_PORT $TJ_GATEWAY_2_HEALTH_PORT $TJ_GATEWAY_2_METRICS_PORT" ;;
  esac
}

ready() {
  case "$1" in
    collector) curl -fsS -o /dev/null --max-time 2 "$COLLECTOR_HEALTH_URL" 2>/dev/null ;;
    jaeger) curl -fsS -o /dev/null --max-time 2 "$JAEGER_QUERY_URL/api/services" 2>/dev/null ;;
    prometheus) curl -fsS -o /dev/null --max-time 2 "$PROMETHEUS_URL/-/ready" 2>/dev/null ;;
    zipkin) curl -fsS -o /dev/null --max-time 2 "$ZIPKIN_URL/health" 2>/dev/null ;;
    agent) curl -fsS -o /dev/null --max-time 2 "http://$H:$TJ_AGENT_HEALTH_PORT/" 2>/dev/null ;;
    gateway-1) curl -fsS -o /dev/null --max-time 2 "http://$H:$TJ_GATEWAY_1_HEALTH_PORT/" 2>/dev/null ;;
    gateway-2) curl -fsS -o /dev/null --max-time 2 "http://$H:$TJ_GATEWAY_2_HEALTH_PORT/" 2>/dev/null ;;
  esac
}

launch() {
  local name="$1"; shift
  local lf; lf="$(log_file "$name")"
  : >"$lf"
  # Own session (setsid) so a Ctrl-C or a test runner's process-group kill does not hit
  # the backends; stdin from /dev/null and stdout/stderr to the log, so a caller that
  # captures our output (child_process.execFile) is not held open by them.
  # fds 8 and 9 (the run and cache locks) are closed in the child, or it would hold them.
  setsid "$@" </dev/null >>"$lf" 2>&1 8>&- 9>&- &
  local pid=$! exe i
  echo "$pid" >"$(pid_file "$name")"
  # Until the background shell has exec'd setsid, env and the server, /proc/PID/exe names
  # bash, setsid or env, and running_pid (which checks the executable, against a reused PID)
  # would call a server that is still starting "exited" (a CI run on a busy machine did, with
  # an empty log). Wait for the exec, at most 10 s; a server that exits is caught by wait_ready.
  for ((i = 0; i < 100; i++)); do
    exe="$(readlink "/proc/$pid/exe" 2>/dev/null)" || break
    case "${exe##*/}" in bash|sh|dash|setsid|env) sleep 0.1 ;; *) break ;; esac
  done
}

start_one() {
  local name="$1" b p
  if [[ -n "$(running_pid "$name")" ]]; then
    log "$name: already running (pid $(running_pid "$name"))"; return
  fi
  b="$(bin_of "$name")"
  [[ -n "$b" && -x "$b" ]] || usage_die "$name binary missing ($b): run 'collector/backends.sh install' first"
  [[ "$name" != zipkin || -f "$ZIPKIN_JAR" ]] || usage_die "zipkin jar missing ($ZIPKIN_JAR): run 'collector/backends.sh install' first"
  for p in $(ports_of "$name"); do
    port_busy "$p" && die "$name: port $H:$p is already in use by another process (override with the TJ_*_PORT variables)"
  done
  case "$name" in
    prometheus)
      rm -rf "$RUN/prometheus-data"; mkdir -p "$RUN/prometheus-data"
      # Prometheus does not expand env vars in its config: write the scrape target (the
      # collector's own telemetry; taskjourney's metrics come by remote write).
      sed -e "s/127\.0\.0\.1:18888/$H:$TJ_COLLECTOR_METRICS_PORT/" "$HERE/prometheus.yml" >"$RUN/prometheus.yml"
      launch prometheus "$b" \
        --config.file="$RUN/prometheus.yml" \
        --storage.tsdb.path="$RUN/prometheus-data" \
        --storage.tsdb.retention.time=1d \
        --web.listen-address="$H:$TJ_PROMETHEUS_PORT" \
        --web.enable-remote-write-receiver \
        --enable-feature=native-histograms
      ;;
    jaeger)
      launch jaeger "$b" --config "file:$HERE/jaeger.yaml"
      ;;
    zipkin)
      # In-memory storage, on this checkout's loopback port only (Armeria's port list, whose
      # default entry listens on every address), a bounded heap and span count; a JIT that stops
      # at its first tier starts it in about a third of the time, which matters more here than
      # its peak speed. Out of memory, it exits (and says so in its log) rather than crawl.
      launch zipkin env STORAGE_TYPE=mem MEM_MAX_SPANS="$TJ_ZIPKIN_MAX_SPANS" SELF_TRACING_ENABLED=false \
        "$b" -Xmx"$TJ_ZIPKIN_HEAP" -XX:+ExitOnOutOfMemoryError -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
        -jar "$ZIPKIN_JAR" \
        --armeria.ports[0].ip="$H" --armeria.ports[0].port="$TJ_ZIPKIN_PORT" --armeria.ports[0].protocols[0]=http
      ;;
    collector)
      mkdir -p "$(dirname "$TJ_TRACES_FILE")"
      [[ -f "$TJ_TRACES_FILE" ]] && mv -f "$TJ_TRACES_FILE" "$TJ_TRACES_FILE.prev"
      launch collector "$b" --config "file:$HERE/otelcol.yaml"
      ;;
    gateway-1|gateway-2)
      # The shipped gateway.yaml, on this checkout's ports, exporting to this checkout's Jaeger
      # and Prometheus.
      local n="${name#gateway-}" grpc http health metrics
      grpc="TJ_GATEWAY_${n}_OTLP_GRPC_PORT"; http="TJ_GATEWAY_${n}_OTLP_HTTP_PORT"
      health="TJ_GATEWAY_${n}_HEALTH_PORT"; metrics="TJ_GATEWAY_${n}_METRICS_PORT"
      launch "$name" env \
        GATEWAY_BIND_HOST="$H" GATEWAY_OTLP_GRPC_PORT="${!grpc}" GATEWAY_OTLP_HTTP_PORT="${!http}" \
        GATEWAY_HEALTH_PORT="${!health}" GATEWAY_METRICS_PORT="${!metrics}" \
        TRACES_OTLP_ENDPOINT="$H:$TJ_JAEGER_OTLP_GRPC_PORT" \
        PROMETHEUS_REMOTE_WRITE_URL="http://$H:$TJ_PROMETHEUS_PORT/api/v1/write" \
        TAIL_DECISION_WAIT="$TJ_GATEWAY_TAIL_DECISION_WAIT" TAIL_LATENCY_MS="$TJ_GATEWAY_TAIL_LATENCY_MS" \
        TAIL_SAMPLING_PERCENT="$TJ_GATEWAY_TAIL_SAMPLING_PERCENT" \
        "$b" --config "file:$HERE/agent-gateway/gateway.yaml"
      ;;
    agent)
      # The shipped agent.yaml with the static-gateways.yaml overlay: both gateways, on loopback.
      launch agent env \
        AGENT_BIND_HOST="$H" AGENT_OTLP_GRPC_PORT="$TJ_AGENT_OTLP_GRPC_PORT" AGENT_OTLP_HTTP_PORT="$TJ_AGENT_OTLP_HTTP_PORT" \
        AGENT_HEALTH_PORT="$TJ_AGENT_HEALTH_PORT" AGENT_METRICS_PORT="$TJ_AGENT_METRICS_PORT" \
        GATEWAY_ENDPOINTS="[$H:$TJ_GATEWAY_1_OTLP_GRPC_PORT, $H:$TJ_GATEWAY_2_OTLP_GRPC_PORT]" \
        "$b" --config "file:$HERE/agent-gateway/agent.yaml" --config "file:$HERE/agent-gateway/static-gateways.yaml"
      ;;
  esac
  log "$name: started (pid $(cat "$(pid_file "$name")"), log $(log_file "$name"))"
}

wait_ready() {
  local name="$1" deadline=$((SECONDS + START_TIMEOUT))
  while ! ready "$name"; do
    if [[ -z "$(running_pid "$name")" ]]; then
      log "$name exited during startup; last lines of $(log_file "$name"):"
      tail -n 40 "$(log_file "$name")" >&2 || true
      return 1
    fi
    if (( SECONDS >= deadline )); then
      log "$name not ready after ${START_TIMEOUT}s; last lines of $(log_file "$name"):"
      tail -n 40 "$(log_file "$name")" >&2 || true
      return 1
    fi
    sleep 0.2
  done
}

# This checkout's services: the three, and the agent + gateway layout once started (until stop).
all_services() {
  local name
  printf '%s\n' "${SERVICES[@]}"
  for name in "${AGENT_GATEWAY_SERVICES[@]}"; do
    if [[ "${TJ_AGENT_GATEWAY:-0}" == 1 || -n "$(running_pid "$name")" ]]; then echo "$name"; fi
  done
}

cmd_start() {
  local agent_gateway=0
  case "${1:-}" in
    "") ;;
    --agent-gateway) agent_gateway=1 ;;
    *) usage_die "start: unknown option '$1' (start [--agent-gateway])" ;;
  esac
  with_run_lock
  local t; t=$(now)
  command -v curl >/dev/null 2>&1 || die "curl is needed"
  mkdir -p "$RUN"
  local name p wanted=("${SERVICES[@]}")
  [[ "$agent_gateway" == 1 ]] && wanted+=("${AGENT_GATEWAY_SERVICES[@]}")
  # Check every port first, so that a clash fails before anything is started.
  for name in "${wanted[@]}"; do
    [[ -n "$(running_pid "$name")" ]] && continue
    for p in $(ports_of "$name"); do
      port_busy "$p" && die "$name: port $H:$p is already in use by another process (override with the TJ_*_PORT variables)"
    done
  done
  # Prometheus and Jaeger first: the collector's exporters point at them.
  env_pairs | grep '^TJ_' | grep -v '_URL=\|_ENDPOINT=' >"$STARTED_ENV"
  # Once started, the layout is part of this checkout's set (status, logs) until `stop`.
  if [[ "$agent_gateway" == 1 || "${TJ_AGENT_GATEWAY:-0}" == 1 ]]; then echo "TJ_AGENT_GATEWAY=1" >>"$STARTED_ENV"; fi
  # Zipkin's JVM takes the longest to start (10-30 s): it starts first and is waited for last.
  for name in zipkin prometheus jaeger; do start_one "$name"; done
  for name in prometheus jaeger; do wait_ready "$name" || { stop_all; die "$name did not become ready"; }; done
  start_one collector
  for name in collector zipkin; do wait_ready "$name" || { stop_all; die "$name did not become ready"; }; done
  if [[ "$agent_gateway" == 1 ]]; then
    # The gateways first: the agent sends to them from its first batch on.
    for name in gateway-1 gateway-2; do start_one "$name"; done
    for name in gateway-1 gateway-2; do wait_ready "$name" || { stop_all; die "$name did not become ready"; }; done
    start_one agent
    wait_ready agent || { stop_all; die "agent did not become ready"; }
    log "agent + gateways ready: agent OTLP http://$H:$TJ_AGENT_OTLP_HTTP_PORT (HTTP) / $H:$TJ_AGENT_OTLP_GRPC_PORT (gRPC) → gateways $H:$TJ_GATEWAY_1_OTLP_GRPC_PORT, $H:$TJ_GATEWAY_2_OTLP_GRPC_PORT (tail sampling) → Jaeger, Prometheus"
  fi
  log "all ready in $(elapsed "$t") s: OTLP http://$H:$TJ_OTLP_HTTP_PORT (HTTP) / $H:$TJ_OTLP_GRPC_PORT (gRPC), Jaeger $JAEGER_QUERY_URL, Prometheus $PROMETHEUS_URL, Zipkin $ZIPKIN_URL/zipkin/"
}

# TERM the given services, wait up to STOP_TIMEOUT for all of them, then KILL the rest.
stop_services() {
  local name pid names=() pids=() i deadline alive killed=0
  for name in "$@"; do
    pid="$(running_pid "$name")"
    if [[ -z "$pid" ]]; then rm -f "$(pid_file "$name")"; continue; fi
    kill -TERM "$pid" 2>/dev/null || true
    names+=("$name"); pids+=("$pid")
  done
  [[ ${#pids[@]} == 0 ]] && return 0
  deadline=$((SECONDS + STOP_TIMEOUT))
  while :; do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [[ "$alive" == 0 ]] && break
    if (( SECONDS >= deadline )); then
      if [[ "$killed" == 1 ]]; then
        log "error: process(es) survived KILL: ${pids[*]}"
        return 1
      fi
      killed=1
      for i in "${!pids[@]}"; do
        if kill -0 "${pids[$i]}" 2>/dev/null; then
          log "${names[$i]} (pid ${pids[$i]}) still running after ${STOP_TIMEOUT}s: KILL"
          kill -KILL "${pids[$i]}" 2>/dev/null || true
        fi
      done
      deadline=$((SECONDS + 5))
      sleep 0.2
      continue
    fi
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    rm -f "$(pid_file "${names[$i]}")"
    log "${names[$i]}: stopped (pid ${pids[$i]})"
  done
}

stop_all() {
  # The agent first, then the gateways, then the collector, so that each can flush to the
  # next on shutdown; then Jaeger and Prometheus together.
  stop_services agent
  stop_services gateway-1 gateway-2
  stop_services collector
  stop_services jaeger prometheus zipkin
  rm -f "$STARTED_ENV"
}

cmd_stop() { with_run_lock; stop_all; }

cmd_status() {
  local json=0 all=0 name pid st
  [[ "${1:-}" == "--json" ]] && json=1
  local out=() names
  mapfile -t names < <(all_services)
  for name in "${names[@]}"; do
    pid="$(running_pid "$name")"
    if [[ -z "$pid" ]]; then st=stopped
    elif ready "$name"; then st=ready; all=$((all + 1))
    else st=starting; fi
    if [[ "$json" == 1 ]]; then
      out+=("\"$name\":{\"state\":\"$st\",\"pid\":${pid:-null},\"log\":\"$(log_file "$name")\"}")
    else
      printf '%-10s %-8s pid=%-8s ports=%s log=%s\n' "$name" "$st" "${pid:--}" "$(ports_of "$name" | tr ' ' ,)" "$(log_file "$name")"
    fi
  done
  if [[ "$json" == 1 ]]; then (IFS=,; printf '{%s}\n' "${out[*]}"); fi
  [[ "$all" == "${#names[@]}" ]]
}

env_pairs() {
  cat <<EOF
TASKJOURNEY_CACHE=$CACHE
TASKJOURNEY_RUN_DIR=$RUN
OTEL_EXPORTER_OTLP_ENDPOINT=http://$H:$TJ_OTLP_HTTP_PORT
TJ_OTLP_HTTP_ENDPOINT=http://$H:$TJ_OTLP_HTTP_PORT
TJ_OTLP_GRPC_ENDPOINT=http://$H:$TJ_OTLP_GRPC_PORT
TJ_COLLECTOR_HEALTH_URL=$COLLECTOR_HEALTH_URL
TJ_COLLECTOR_PROMETHEUS_URL=http://$H:$TJ_PROM_EXPORTER_PORT/metrics
TJ_COLLECTOR_METRICS_URL=http://$H:$TJ_COLLECTOR_METRICS_PORT/metrics
TJ_JAEGER_OTLP_GRPC_ENDPOINT=http://$H:$TJ_JAEGER_OTLP_GRPC_PORT
TJ_JAEGER_OTLP_HTTP_ENDPOINT=http://$H:$TJ_JAEGER_OTLP_HTTP_PORT
JAEGER_QUERY_URL=$JAEGER_QUERY_URL
PROMETHEUS_URL=$PROMETHEUS_URL
ZIPKIN_URL=$ZIPKIN_URL
OTEL_EXPORTER_ZIPKIN_ENDPOINT=$ZIPKIN_URL/api/v2/spans
TJ_TRACES_FILE=$TJ_TRACES_FILE
TJ_BIND_HOST=$TJ_BIND_HOST
TJ_OTLP_GRPC_PORT=$TJ_OTLP_GRPC_PORT
TJ_OTLP_HTTP_PORT=$TJ_OTLP_HTTP_PORT
TJ_COLLECTOR_HEALTH_PORT=$TJ_COLLECTOR_HEALTH_PORT
TJ_PROM_EXPORTER_PORT=$TJ_PROM_EXPORTER_PORT
TJ_COLLECTOR_METRICS_PORT=$TJ_COLLECTOR_METRICS_PORT
TJ_JAEGER_OTLP_GRPC_PORT=$TJ_JAEGER_OTLP_GRPC_PORT
TJ_JAEGER_OTLP_HTTP_PORT=$TJ_JAEGER_OTLP_HTTP_PORT
TJ_JAEGER_QUERY_PORT=$TJ_JAEGER_QUERY_PORT
TJ_JAEGER_QUERY_GRPC_PORT=$TJ_JAEGER_QUERY_GRPC_PORT
TJ_PROMETHEUS_PORT=$TJ_PROMETHEUS_PORT
TJ_ZIPKIN_PORT=$TJ_ZIPKIN_PORT
TJ_ZIPKIN_HEAP=$TJ_ZIPKIN_HEAP
TJ_ZIPKIN_MAX_SPANS=$TJ_ZIPKIN_MAX_SPANS
TJ_AGENT_OTLP_HTTP_ENDPOINT=http://$H:$TJ_AGENT_OTLP_HTTP_PORT
TJ_AGENT_OTLP_GRPC_ENDPOINT=http://$H:$TJ_AGENT_OTLP_GRPC_PORT
TJ_AGENT_HEALTH_URL=http://$H:$TJ_AGENT_HEALTH_PORT/
TJ_AGENT_METRICS_URL=http://$H:$TJ_AGENT_METRICS_PORT/metrics
TJ_GATEWAY_1_METRICS_URL=http://$H:$TJ_GATEWAY_1_METRICS_PORT/metrics
TJ_GATEWAY_2_METRICS_URL=http://$H:$TJ_GATEWAY_2_METRICS_PORT/metrics
TJ_AGENT_OTLP_GRPC_PORT=$TJ_AGENT_OTLP_GRPC_PORT
TJ_AGENT_OTLP_HTTP_PORT=$TJ_AGENT_OTLP_HTTP_PORT
TJ_AGENT_HEALTH_PORT=$TJ_AGENT_HEALTH_PORT
TJ_AGENT_METRICS_PORT=$TJ_AGENT_METRICS_PORT
TJ_GATEWAY_1_OTLP_GRPC_PORT=$TJ_GATEWAY_1_OTLP_GRPC_PORT
TJ_GATEWAY_1_OTLP_HTTP_PORT=$TJ_GATEWAY_1_OTLP_HTTP_PORT
TJ_GATEWAY_1_HEALTH_PORT=$TJ_GATEWAY_1_HEALTH_PORT
TJ_GATEWAY_1_METRICS_PORT=$TJ_GATEWAY_1_METRICS_PORT
TJ_GATEWAY_2_OTLP_GRPC_PORT=$TJ_GATEWAY_2_OTLP_GRPC_PORT
TJ_GATEWAY_2_OTLP_HTTP_PORT=$TJ_GATEWAY_2_OTLP_HTTP_PORT
TJ_GATEWAY_2_HEALTH_PORT=$TJ_GATEWAY_2_HEALTH_PORT
TJ_GATEWAY_2_METRICS_PORT=$TJ_GATEWAY_2_METRICS_PORT
TJ_GATEWAY_TAIL_DECISION_WAIT=$TJ_GATEWAY_TAIL_DECISION_WAIT
TJ_GATEWAY_TAIL_LATENCY_MS=$TJ_GATEWAY_TAIL_LATENCY_MS
TJ_GATEWAY_TAIL_SAMPLING_PERCENT=$TJ_GATEWAY_TAIL_SAMPLING_PERCENT
EOF
}

cmd_env() {
  local k v
  if [[ "${1:-}" == "--json" ]]; then
    local first=1
    printf '{'
    while IFS='=' read -r k v; do
      v="${v//\\/\\\\}"; v="${v//\"/\\\"}"
      [[ "$first" == 1 ]] || printf ','
      first=0
      printf '"%s":"%s"' "$k" "$v"
    done < <(env_pairs)
    printf '}\n'
  else
    while IFS='=' read -r k v; do
      printf "export %s='%s'\n" "$k" "${v//\'/\'\\\'\'}"
    done < <(env_pairs)
  fi
}

cmd_logs() {
  local names
  mapfile -t names < <(all_services)
  [[ -n "${1:-}" ]] && names=("$1")
  local n
  for n in "${names[@]}"; do
    printf '==> %s <==\n' "$(log_file "$n")"
    tail -n "${TJ_LOG_LINES:-40}" "$(log_file "$n")" 2>/dev/null || echo "(no log)"
  done
}

# Live backends of other checkouts (their PID files under the cache), one line each.
others_running() {
  local f pid exe dir
  for f in "$CACHE"/runs/*/*.pid "$CACHE"/run/*.pid; do
    [[ -f "$f" ]] || continue
    dir="$(dirname "$f")"
    [[ "$dir" -ef "$RUN" ]] && continue
    pid="$(cat "$f" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || continue
    exe="$(readlink "/proc/$pid/exe" 2>/dev/null || true)"
    [[ "$exe" == *otelcol-taskjourney* || "$exe" == */jaeger* || "$exe" == *prometheus* || "$exe" == */java* ]] && echo "$(basename "$f" .pid) pid $pid ($dir)"
  done
  return 0
}

cmd_clean() {
  with_run_lock
  stop_all
  with_cache_lock
  case "$CACHE" in ""|/|"${HOME:-/}") die "refusing to delete '$CACHE'" ;; esac
  local others; others="$(others_running)"
  [[ -z "$others" ]] || die "not deleting $CACHE: other checkouts' backends run from it (stop them first):"$'\n'"$others"
  rm -rf "$CACHE"
  log "removed $CACHE"
}

case "${1:-}" in
  install) shift; cmd_install "$@" ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  restart) shift; cmd_stop; cmd_start ;;
  status) shift; cmd_status "$@" ;;
  env) shift; cmd_env "$@" ;;
  logs) shift; cmd_logs "$@" ;;
  clean) shift; cmd_clean ;;
  *) usage_die "usage: $0 install|start [--agent-gateway]|stop|restart|status [--json]|env [--json]|logs [name]|clean" ;;
esac
