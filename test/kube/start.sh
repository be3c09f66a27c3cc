#!/usr/bin/env bash
# Starts a one-node Kubernetes cluster on this machine for the end-to-end
# test: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# containerd (with the ptp CNI plugin) and a kubelet, all under $KUBE_E2E_DIR/run.
#
#   test/kube/start.sh PAUSE_IMAGE.tar [IMAGE.tar...]
#
# The archives are imported into containerd (nothing is pulled); the first
# is the pods' sandbox (pause) image. Every wait is bounded; on any failure the
# cluster is torn down again (teardown.sh) and the last lines of the failing
# component's log are printed. Needs root, and the binaries of build.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"

if [ $# -lt 1 ]; then
  echo "usage: $0 PAUSE_IMAGE.tar [IMAGE.tar...]" >&2
  exit 2
fi
for bin in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
  if [ ! -x "$KUBE_E2E_DIR/bin/$bin" ]; then
    echo "start.sh: $KUBE_E2E_DIR/bin/$bin missing: run test/kube/build.sh first" >&2
    exit 1
  fi
done
for cmd in etcd containerd runc ctr openssl; do
  command -v "$cmd" >/dev/null || { echo "start.sh: $cmd missing: run test/kube/install.sh first" >&2; exit 1; }
done
[ -x /usr/lib/cni/ptp ] || { echo "start.sh: CNI plugins missing: run test/kube/install.sh first" >&2; exit 1; }

# A cluster left by an interrupted run is removed first.
"$here/teardown.sh"
on_exit() {
  local status=$?
  [ "$status" -eq 0 ] && return
  echo "start.sh: failed; tearing the cluster down" >&2
  "$here/teardown.sh"
}
trap on_exit EXIT

R="$KUBE_E2E_RUN"
mkdir -p "$R"/{pids,logs,pki,cni/net.d,cni/ipam,containerd,runc}
began=$(date +%s)

# The machine settings the kubelet changes (it sets these kernel tunables on
# start) and the ones changed here are restored by teardown.sh.
for key in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops \
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes net/ipv4/ip_forward; do
  echo "$key $(cat "/proc/sys/$key")"
done > "$R/sysctl.saved"
ls /run/netns 2>/dev/null > "$R/netns.before" || true
echo 1 > /proc/sys/net/ipv4/ip_forward   # pod to pod goes through this host
if ! ip -4 addr show dev lo | grep -q " $KUBE_E2E_NODE_IP/"; then
  ip addr add "$KUBE_E2E_NODE_IP/32" dev lo
  touch "$R/node-ip.added"
fi

"$here/certs.sh" "$R/pki"

fail() {  # fail COMPONENT MESSAGE: print the component's log tail and stop
  echo "start.sh: $2" >&2
  tail -n 40 "$R/logs/$1.log" >&2 || true
  exit 1
}
daemon() {  # daemon NAME COMMAND...: start in the background, logging to logs/NAME.log
  local name=$1; shift
  setsid "$@" >"$R/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$R/pids/$name.pid"
}
await() {  # await COMPONENT SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds
  local name=$1 secs=$2 what=$3; shift 3
  local deadline=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    kill -0 "$(cat "$R/pids/$name.pid")" 2>/dev/null || fail "$name" "$name exited while waiting for $what"
    [ "$(date +%s)" -lt "$deadline" ] || fail "$name" "no $what within ${secs}s"
    sleep 0.5
  done
}

daemon etcd etcd --name e2e --data-dir "$R/etcd" \
  --listen-client-urls "http://127.0.0.1:$KUBE_E2E_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$KUBE_E2E_ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$((KUBE_E2E_ETCD_PORT + 10))" \
  --initial-advertise-peer-urls "http://127.0.0.1:$((KUBE_E2E_ETCD_PORT + 10))" \
  --initial-cluster "e2e=http://127.0.0.1:$((KUBE_E2E_ETCD_PORT + 10))"
await etcd 60 "etcd health" curl -sf "http://127.0.0.1:$KUBE_E2E_ETCD_PORT/health"

# On loopback the API server cannot publish its own endpoints (the endpoint
# reconciler refuses a loopback address); nothing here needs them.
daemon kube-apiserver kube-apiserver --etcd-servers "http://127.0.0.1:$KUBE_E2E_ETCD_PORT" \
  --bind-address 127.0.0.1 --secure-port "$KUBE_E2E_API_PORT" --endpoint-reconciler-type none \
  --service-cluster-ip-range "$KUBE_E2E_SERVICE_RANGE" --authorization-mode RBAC \
  --client-ca-file "$R/pki/ca.crt" --tls-cert-file "$R/pki/apiserver.crt" --tls-private-key-file "$R/pki/apiserver.key" \
  --kubelet-client-certificate "$R/pki/admin.crt" --kubelet-client-key "$R/pki/admin.key" \
  --kubelet-preferred-address-types InternalIP \
  --service-account-key-file "$R/pki/sa.pub" --service-account-signing-key-file "$R/pki/sa.key" \
  --service-account-issuer https://kubernetes.default.svc
await kube-apiserver 120 "API server /readyz" kubectl get --raw /readyz

# The controllers act with their own service accounts' rights (RBAC's
# bootstrap roles), as in a real cluster.
daemon kube-controller-manager kube-controller-manager --kubeconfig "$KUBECONFIG" \
  --bind-address 127.0.0.1 --secure-port 20257 --leader-elect=false \
  --use-service-account-credentials=true --service-account-private-key-file "$R/pki/sa.key" \
  --root-ca-file "$R/pki/ca.crt" --cluster-signing-cert-file "$R/pki/ca.crt" --cluster-signing-key-file "$R/pki/ca.key"
daemon kube-scheduler kube-scheduler --kubeconfig "$KUBECONFIG" \
  --bind-address 127.0.0.1 --secure-port 20259 --leader-elect=false

# containerd: its own root, state, socket and runc root; the sandbox image
# is the imported pause image. Without CAP_SYS_RESOURCE a container may not
# lower its OOM score below containerd's own: restrict_oom_score_adj.
cat >"$R/containerd/config.toml" <<TOML
version = 2
root = "$R/containerd/root"
state = "$R/containerd/state"
[grpc]
  address = "$KUBE_E2E_CONTAINERD_SOCK"
[ttrpc]
  address = "$KUBE_E2E_CONTAINERD_SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$R/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$KUBE_E2E_PAUSE_IMAGE"
  restrict_oom_score_adj = true
  # Pod network namespaces under the state directory, where teardown.sh
  # finds them.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$R/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$R/cni/net.d"
TOML
# Each pod gets its own network namespace and a point-to-point link to this
# host, with an address of the pod subnet and a route to that subnet only
# (ptp adds it; no default route).
cat >"$R/cni/net.d/10-omnibench-e2e.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "omnibench-e2e", "plugins": [
  {"type": "ptp", "ipMasq": false, "ipam": {"type": "host-local",
    "ranges": [[{"subnet": "$KUBE_E2E_POD_SUBNET"}]],
    "dataDir": "$R/cni/ipam"}},
  {"type": "loopback"}
]}
JSON
daemon containerd containerd --config "$R/containerd/config.toml"
await containerd 60 "containerd socket" kube_e2e_ctr version
for archive in "$@"; do
  kube_e2e_ctr images import "$archive" >"$R/logs/import.log" 2>&1 || fail import "ctr images import $archive failed"
done

# The kubelet: cgroup v1 with cgroupfs (this machine has no cgroup v2), swap
# allowed, eviction only when the machine is really short (it is shared).
cat >"$R/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $KUBE_E2E_NODE_IP
port: $KUBE_E2E_KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((KUBE_E2E_KUBELET_PORT - 2))
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$KUBE_E2E_CONTAINERD_SOCK
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $R/pki/ca.crt}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
serializeImagePulls: false
# Leave this machine's packet filter alone: nothing here needs the
# kubelet's iptables chains.
makeIPTablesUtilChains: false
YAML
daemon kubelet kubelet --config "$R/kubelet.yaml" --kubeconfig "$KUBECONFIG" \
  --root-dir "$KUBE_E2E_KUBELET_ROOT" --cert-dir "$R/kubelet-pki" \
  --node-ip "$KUBE_E2E_NODE_IP" --hostname-override "$KUBE_E2E_NODE_NAME"
await kubelet 120 "node $KUBE_E2E_NODE_NAME registered" kubectl get node "$KUBE_E2E_NODE_NAME"
await kubelet 120 "node $KUBE_E2E_NODE_NAME Ready" \
  kubectl wait --for=condition=Ready "node/$KUBE_E2E_NODE_NAME" --timeout=5s
# Pods are refused until the namespace's default service account exists.
await kube-controller-manager 120 "the default service account" kubectl get serviceaccount default

echo "start.sh: cluster ready in $(( $(date +%s) - began ))s (KUBECONFIG=$KUBECONFIG)"
