#!/usr/bin/env bash
# Tears down what start.sh started, whatever state it is in, and cleans what
# the kubelet and containerd leave behind: containers and their shims, pod
# network namespaces, the mounts under the cluster's directory (the kubelet
# bind-mounts its root onto itself), the kubepods cgroups, the node address
# on lo and the kernel settings. Safe to run twice, or with nothing running.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
R="$KUBE_E2E_RUN"
[ -d "$R" ] || exit 0

alive() { [ -f "$R/pids/$1.pid" ] && kill -0 "$(cat "$R/pids/$1.pid")" 2>/dev/null; }
stop() {  # stop NAME: SIGTERM, up to 10 s, then SIGKILL
  alive "$1" || return 0
  local pid; pid=$(cat "$R/pids/$1.pid")
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
  kill -KILL "$pid" 2>/dev/null
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
}

# While the kubelet runs, let it remove the pods: that tears their network
# down through the CNI plugins as in any cluster (bounded: 60 s).
if alive kubelet && alive kube-apiserver; then
  timeout 20 kubectl delete deployments,jobs,pods --all --all-namespaces --grace-period=0 --force --wait=false >/dev/null 2>&1
  for _ in $(seq 1 120); do
    [ -z "$(kube_e2e_ctr tasks ls -q 2>/dev/null)" ] && break
    sleep 0.5
  done
fi
for name in kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$name"; done

# Whatever is still running in containerd: killed and removed.
if alive containerd; then
  for id in $(kube_e2e_ctr tasks ls -q 2>/dev/null); do
    kube_e2e_ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1
  done
  for id in $(kube_e2e_ctr tasks ls -q 2>/dev/null); do
    timeout 10 ctr --address "$KUBE_E2E_CONTAINERD_SOCK" --namespace k8s.io tasks delete -f "$id" >/dev/null 2>&1
  done
  for id in $(kube_e2e_ctr containers ls -q 2>/dev/null); do
    kube_e2e_ctr containers delete "$id" >/dev/null 2>&1
  done
fi
stop containerd
# containerd's shims outlive it: the ones started for this cluster name its socket.
for pid in $(pgrep -f -- "-address $KUBE_E2E_CONTAINERD_SOCK" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done

# Pod network namespaces containerd created and nobody removed.
if [ -f "$R/netns.before" ]; then
  for ns in $(ls /run/netns 2>/dev/null | grep -vxFf "$R/netns.before"); do
    case "$ns" in cni-*) umount "/run/netns/$ns" 2>/dev/null; rm -f "/run/netns/$ns" ;; esac
  done
fi
# Mounts under the cluster's directory, deepest first (several passes: the
# kubelet's self-bind mount holds the pods' volume mounts beneath it).
for _ in 1 2 3; do
  mounts=$(awk -v r="$R" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r)
  [ -z "$mounts" ] && break
  for m in $mounts; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
done
# The kubelet's cgroups (cgroup v1: one tree per controller), leaves first.
for tree in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/kubepods.slice; do
  [ -d "$tree" ] && find "$tree" -depth -type d -exec rmdir {} + 2>/dev/null
done

if [ -f "$R/node-ip.added" ]; then ip addr del "$KUBE_E2E_NODE_IP/32" dev lo 2>/dev/null; fi
if [ -f "$R/sysctl.saved" ]; then
  while read -r key value; do echo "$value" > "/proc/sys/$key" 2>/dev/null; done < "$R/sysctl.saved"
fi
rm -rf "$R" || { echo "teardown.sh: could not remove $R" >&2; exit 1; }
