#!/usr/bin/env bash
# Builds the one-node cluster's Kubernetes binaries (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kubectl) from the module
# in test/kube/k8s into $KUBE_E2E_DIR/bin. The first build is heavy (about
# 7 minutes of an idle 2-core machine and 3 GB of memory); it runs at the
# lowest CPU priority and is skipped when the binaries were built from the same
# go.mod and go.sum.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"

mod="$here/k8s"
stamp="$(cat "$mod/go.mod" "$mod/go.sum" "$0" | sha256sum | cut -c1-16)"
if [ -f "$KUBE_E2E_DIR/bin/.stamp" ] && [ "$(cat "$KUBE_E2E_DIR/bin/.stamp")" = "$stamp" ]; then
  echo "build.sh: Kubernetes binaries up to date in $KUBE_E2E_DIR/bin"
  exit 0
fi
mkdir -p "$KUBE_E2E_DIR/bin"
rm -f "$KUBE_E2E_DIR/bin/.stamp"

# kubectl refuses a server or client whose version it cannot parse, and an
# unstamped build says v0.0.0-master: stamp the release the module requires.
version="$(cd "$mod" && go list -m -f '{{.Version}}' k8s.io/kubernetes)"
minor="$(echo "$version" | cut -d. -f2)"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

cd "$mod"
start=$(date +%s)
CGO_ENABLED=0 nice -n 19 go build -ldflags "$ldflags" -o "$KUBE_E2E_DIR/bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubelet \
  k8s.io/kubernetes/cmd/kubectl
echo "$stamp" > "$KUBE_E2E_DIR/bin/.stamp"
echo "build.sh: built Kubernetes $version in $(( $(date +%s) - start ))s"
