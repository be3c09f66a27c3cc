// Package kubee2e is the end-to-end test of omnibench on a real Kubernetes:
// a one-node cluster that test/kube/start.sh starts on this machine (etcd,
// the control plane, containerd and a kubelet), omnibench's own image built
// without a Docker engine (internal/tools/imagearchive), the simulator as a
// Deployment and Service, and exactly what `omnibench kube render` prints,
// applied with strict server-side validation, run, collected the way
// docs/scaling-out.md says, and merged.
//
// The test is opt-in: it runs when OMNIBENCH_KUBE_E2E=1 (.ci/run sets it),
// as root, after test/kube/install.sh and test/kube/build.sh; otherwise it
// skips, so that `go test ./...` stays fast.
package kubee2e
