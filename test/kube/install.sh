#!/usr/bin/env bash
# Installs the Debian packages the one-node cluster runs on: etcd (the API
# server's store), containerd and runc (the container runtime), the CNI
# plugins (ptp and host-local give each pod its own network namespace on this
# machine) and a static busybox (the shell in the test image).
set -euo pipefail
need=()
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v containerd >/dev/null 2>&1 || need+=(containerd)
command -v runc >/dev/null 2>&1 || need+=(runc)
[ -x /usr/lib/cni/ptp ] || need+=(containernetworking-plugins)
[ -x /bin/busybox ] || need+=(busybox-static)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d keeps the packages' own services from starting: the cluster
  # scripts start etcd and containerd with their own configuration.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
