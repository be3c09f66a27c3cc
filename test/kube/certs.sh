#!/usr/bin/env bash
# Writes the one-node cluster's keys and certificates into DIR: a CA, the API
# server's serving certificate, one client certificate in system:masters
# that every component and kubectl use (a one-node test cluster needs no
# finer rights), the service-account signing key, and the admin kubeconfig.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
dir=$1
cd "$dir"
ossl() { openssl "$@" 2>/dev/null; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=omnibench-e2e-ca"
ossl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver"
printf 'subjectAltName=IP:127.0.0.1,IP:%s,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' \
  "$KUBE_E2E_NODE_IP" >apiserver.ext
ossl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 2 -extfile apiserver.ext
ossl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=omnibench-e2e-admin"
ossl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt -days 2
ossl genrsa -out sa.key 2048
ossl rsa -in sa.key -pubout -out sa.pub
server="https://127.0.0.1:$KUBE_E2E_API_PORT"
kubectl config set-cluster e2e --server "$server" --certificate-authority "$dir/ca.crt" --embed-certs >/dev/null
kubectl config set-credentials admin --client-certificate "$dir/admin.crt" --client-key "$dir/admin.key" --embed-certs >/dev/null
kubectl config set-context e2e --cluster e2e --user admin --namespace default >/dev/null
kubectl config use-context e2e >/dev/null
