#!/usr/bin/env bash
# Build the stack's programs from their released Go modules, pinned, into a
# cache folder outside the repository:
#
#   otelcol-probability  an OpenTelemetry Collector with exactly the components
#                        of otel-collector/config.yaml (backends/otelcol/)
#   jaeger               Jaeger v2 (backends/jaeger/)
#   prometheus           Prometheus 3, without the web UI's assets and without
#                        service discovery (backends/prometheus/)
#   alertmanager         Alertmanager, with a placeholder page instead of its
#                        web UI (backends/alertmanager/)
#
# Each program is a small Go module in deploy/backends/<name>/ whose go.mod and
# go.sum pin every module it is built from, and whose build.env says what to
# build and how. Only the Go module proxy is used (GOPROXY as set up); no
# @latest, no download site.
#
#   deploy/build-backends.sh            build what is missing or out of date
#   deploy/build-backends.sh --check    exit 0 if all are built and up to date,
#                                       1 otherwise (no Go needed)
#   deploy/build-backends.sh --force    rebuild all
#   deploy/build-backends.sh NAME...    only these (otelcol-probability, jaeger,
#                                       prometheus, alertmanager)
#
# Where: $PROB_BACKENDS_DIR, by default ${XDG_CACHE_HOME:-~/.cache}/pytest-probability/backends.
# A program is up to date when its stamp (the SHA-256 of the files of its
# deploy/backends/<name>/ folder) matches the one written beside it when it was
# built; then nothing is run, so a second call takes well under a second.
# Go's own caches (GOMODCACHE, GOCACHE) stay where Go keeps them, outside the
# repository. PROB_BACKENDS_JOBS=N builds N programs at once (default 1: each
# Go build already uses every core).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
backends="$here/backends"
out="${PROB_BACKENDS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pytest-probability/backends}"
all=(otelcol-probability jaeger prometheus alertmanager)

# The folder of deploy/backends/ that holds a program's module.
module_dir() {
  case "$1" in
    otelcol-probability) echo "$backends/otelcol" ;;
    *) echo "$backends/$1" ;;
  esac
}

# SHA-256 of the module folder's files, in name order (tests/deploy/backends.py
# computes the same).
stamp() {
  local dir f
  dir="$(module_dir "$1")"
  (cd "$dir" && for f in $(LC_ALL=C ls -A); do
     [ -f "$f" ] || continue
     printf '%s\0' "$f"; cat "$f"; printf '\0'
   done) | sha256sum | cut -d' ' -f1
}

up_to_date() {
  [ -x "$out/$1" ] && [ -f "$out/$1.stamp" ] && [ "$(cat "$out/$1.stamp")" = "$(stamp "$1")" ]
}

build_one() {
  local name="$1" dir
  dir="$(module_dir "$name")"
  # build.env sets PACKAGE, VERSION, TAGS, LDFLAGS and, where needed, EMBED_PLACEHOLDERS.
  local PACKAGE="" VERSION="" TAGS="" LDFLAGS="" EMBED_PLACEHOLDERS=""
  # shellcheck disable=SC1091
  . "$dir/build.env"
  local start end tmp modfile=()
  start=$(date +%s)
  mkdir -p "$out"
  tmp="$(mktemp -d "$out/.build-$name.XXXXXX")"
  if [ -n "$EMBED_PLACEHOLDERS" ]; then
    # Files that a //go:embed of the module needs but its release does not
    # ship (a built web UI): the build uses a copy of the released module
    # (as downloaded and checked against go.sum) with placeholder.html in
    # their place, through a replace directive in a copy of go.mod (-modfile).
    # Go refuses overlays of files in its module cache, hence the copy.
    local module="${PACKAGE%%/cmd/*}" moddir target
    (cd "$dir" && go mod download "$module")
    moddir="$(cd "$dir" && go list -m -f '{{.Dir}}' "$module")"
    cp -R "$moddir" "$tmp/src"
    chmod -R u+w "$tmp/src"
    for target in $EMBED_PLACEHOLDERS; do
      mkdir -p "$(dirname "$tmp/src/$target")"
      cp "$dir/placeholder.html" "$tmp/src/$target"
    done
    cp "$dir/go.mod" "$tmp/build.mod"
    cp "$dir/go.sum" "$tmp/build.sum"
    (cd "$dir" && go mod edit -modfile="$tmp/build.mod" -replace="$module=$tmp/src")
    modfile=(-modfile "$tmp/build.mod")
  fi
  echo "building $name $VERSION ($PACKAGE)"
  (cd "$dir" && go build -trimpath -buildvcs=false ${TAGS:+-tags "$TAGS"} -ldflags "-s -w $LDFLAGS" "${modfile[@]}" \
      -o "$tmp/$name" "$PACKAGE")
  mv -f "$tmp/$name" "$out/$name"
  stamp "$name" > "$out/$name.stamp"
  echo "$VERSION" > "$out/$name.version"
  rm -rf "$tmp"
  end=$(date +%s)
  echo "built $name $VERSION in $((end - start)) s: $out/$name"
}

check=0 force=0 names=()
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $arg" >&2; exit 2 ;;
    *) names+=("$arg") ;;
  esac
done
[ ${#names[@]} -gt 0 ] || names=("${all[@]}")
for name in "${names[@]}"; do
  [ -f "$(module_dir "$name")/build.env" ] || { echo "unknown program $name (${all[*]})" >&2; exit 2; }
done

todo=()
for name in "${names[@]}"; do
  if [ $force = 0 ] && up_to_date "$name"; then
    [ $check = 1 ] || echo "$name is up to date: $out/$name ($(cat "$out/$name.version"))"
  else
    todo+=("$name")
  fi
done
if [ $check = 1 ]; then
  for name in "${todo[@]}"; do echo "$name: missing or out of date in $out" >&2; done
  [ ${#todo[@]} = 0 ]
  exit
fi
[ ${#todo[@]} -gt 0 ] || exit 0

command -v go >/dev/null 2>&1 || {
  echo "go is not on the PATH: the stack's programs are built with Go (see deploy/README.md)" >&2; exit 1; }
echo "$(go version); programs go to $out"

jobs="${PROB_BACKENDS_JOBS:-1}"
if [ "$jobs" -le 1 ]; then
  for name in "${todo[@]}"; do build_one "$name"; done
else
  pids=() failed=0
  for name in "${todo[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
    build_one "$name" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  [ $failed = 0 ] || { echo "a build failed" >&2; exit 1; }
fi
