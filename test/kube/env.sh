# Sourced by the scripts in test/kube: where the one-node cluster keeps its
# binaries, configuration, state and logs. One directory, so that teardown.sh
# knows everything the cluster made.
KUBE_E2E_DIR="${KUBE_E2E_DIR:-/var/tmp/omnibench-kube}"
KUBE_E2E_RUN="$KUBE_E2E_DIR/run"          # state of the running cluster
KUBE_E2E_KUBELET_ROOT="$KUBE_E2E_RUN/kubelet"
KUBE_E2E_CONTAINERD_SOCK="$KUBE_E2E_RUN/containerd/containerd.sock"
KUBECONFIG="$KUBE_E2E_RUN/admin.kubeconfig"
PATH="$KUBE_E2E_DIR/bin:$PATH"
export KUBE_E2E_DIR KUBE_E2E_RUN KUBE_E2E_KUBELET_ROOT KUBE_E2E_CONTAINERD_SOCK KUBECONFIG PATH

# Addresses and ports. Everything listens on this machine only: the control
# plane on 127.0.0.1, the pods in their own network namespaces on
# KUBE_E2E_POD_SUBNET (ptp links to this host, no route elsewhere), and the
# node on KUBE_E2E_NODE_IP, an extra address on the loopback interface (the
# kubelet refuses 127.0.0.0/8 as a node address; the API server reaches the
# kubelet there for kubectl exec, cp and logs). Ports are off the usual ones
# so that a cluster already on this machine is not disturbed.
KUBE_E2E_NODE_IP="${KUBE_E2E_NODE_IP:-10.245.0.1}"
KUBE_E2E_POD_SUBNET="${KUBE_E2E_POD_SUBNET:-10.244.0.0/24}"
KUBE_E2E_SERVICE_RANGE="10.96.0.0/24"
KUBE_E2E_NODE_NAME="omnibench-e2e"
KUBE_E2E_ETCD_PORT=23790
KUBE_E2E_API_PORT=16443
KUBE_E2E_KUBELET_PORT=20250
# Images the pods run: imported into containerd, never pulled.
KUBE_E2E_PAUSE_IMAGE="omnibench.local/pause:e2e"
KUBE_E2E_IMAGE="omnibench.local/omnibench:e2e"
export KUBE_E2E_NODE_IP KUBE_E2E_POD_SUBNET KUBE_E2E_PAUSE_IMAGE KUBE_E2E_IMAGE

# ctr against this cluster's containerd, in the namespace the kubelet uses.
kube_e2e_ctr() { ctr --address "$KUBE_E2E_CONTAINERD_SOCK" --namespace k8s.io "$@"; }
