#!/usr/bin/env bash
# Installs the Debian packages if missing, builds the experiment against the
# Debian-packaged structured-merge-diff sources (no network besides apt), runs
# it, and writes output.txt next to this script.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
cd "$HERE"

PKGS="golang-go golang-k8s-sigs-structured-merge-diff-dev golang-github-json-iterator-go-dev golang-gopkg-yaml.v2-dev golang-github-modern-go-concurrent-dev golang-github-modern-go-reflect2-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "installing:$missing" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >&2
fi

SRC=/usr/share/gocode/src
WORK="$(mktemp -d /tmp/smd-gopath.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
# GOPATH layout: Debian ships SMD without the /v4 path element, so link it in.
mkdir -p "$WORK/src/sigs.k8s.io/structured-merge-diff" "$WORK/src/github.com" "$WORK/src/gopkg.in"
ln -s "$SRC/sigs.k8s.io/structured-merge-diff" "$WORK/src/sigs.k8s.io/structured-merge-diff/v4"
ln -s "$SRC/github.com/json-iterator" "$WORK/src/github.com/json-iterator"
ln -s "$SRC/github.com/modern-go" "$WORK/src/github.com/modern-go"
ln -s "$SRC/gopkg.in/yaml.v2" "$WORK/src/gopkg.in/yaml.v2"

export GO111MODULE=off GOPATH="$WORK" GOCACHE="$WORK/cache" GOFLAGS= GOPROXY=off
go version >&2
echo "SMD package: $(dpkg-query -W -f='${Package} ${Version}' golang-k8s-sigs-structured-merge-diff-dev)" >&2
go build -o "$WORK/smd-experiment" main.go
{
  echo "# go: $(go version)"
  echo "# SMD: $(dpkg-query -W -f='${Package} ${Version}' golang-k8s-sigs-structured-merge-diff-dev)"
  "$WORK/smd-experiment" "$HERE/schema.yaml"
} > "$HERE/output.txt"
echo "wrote $HERE/output.txt ($(wc -l < "$HERE/output.txt") lines)" >&2
