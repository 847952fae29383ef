#!/usr/bin/env bash
# Makes sure a Prometheus server binary is on PATH for the end-to-end tests: Debian's prometheus
# package when it is missing. Needs root (as CI and the dev machines run) or sudo.
set -euo pipefail
if command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "prometheus is missing and installing it needs root: apt-get install prometheus" >&2; exit 1; }
  SUDO=sudo
fi
echo "installing Debian's prometheus for the end-to-end tests"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
# The package may start a system service; the tests run their own server on loopback ports.
if command -v systemctl >/dev/null 2>&1; then $SUDO systemctl stop prometheus >/dev/null 2>&1 || true; fi
command -v prometheus >/dev/null
