package kubee2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostPathClass is the storage class of the test's results volume: a
// directory of this machine (one node shares it with itself), standing in
// for the ReadWriteMany storage (NFS, CephFS, a cloud file store) of a
// real cluster.
const hostPathClass = "omnibench-e2e-hostpath"

// hostPathVolume creates the volume that the claim of test name binds.
func (c *cluster) hostPathVolume(t *testing.T, ctx context.Context, name, path string) {
	t.Helper()
	c.apply(t, ctx, fmt.Appendf(nil, `apiVersion: v1
kind: PersistentVolume
metadata: {name: %[1]s-results}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: %[2]s
  claimRef: {namespace: default, name: %[1]s-results}
  hostPath: {path: %[3]q, type: DirectoryOrCreate}
`, name, hostPathClass, path))
}

// deleteTest removes what render and the test created for test name, and
// waits until the pods are gone (their volumes are in the test's
// temporary directory). The lingering pods' shell ignores SIGTERM (it is
// process 1): they get one second, not the default thirty, so the Job goes
// first, leaving its pods (the controller would replace them otherwise).
func (c *cluster) deleteTest(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c.kubectl(t, ctx, nil, "delete", "--ignore-not-found", "--cascade=orphan", "--timeout=2m", "job/"+name)
	c.kubectl(t, ctx, nil, "delete", "--ignore-not-found", "--grace-period=1", "--timeout=2m", "pods", "-l", "job-name="+name)
	c.kubectl(t, ctx, nil, "delete", "--ignore-not-found", "--grace-period=1", "--timeout=2m",
		"pod/"+name+"-collect", "configmap/"+name+"-scenario", "pvc/"+name+"-results", "pv/"+name+"-results")
}

// shardPod is the pod of one index as the watch saw it.
type shardPod struct {
	name, uid, containerID string
}

// podObject is the part of a pod the test reads.
type podObject struct {
	Metadata struct {
		Name        string            `json:"name"`
		UID         string            `json:"uid"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Status struct {
		ContainerStatuses []struct {
			ContainerID string `json:"containerID"`
			State       struct {
				Running    *struct{} `json:"running"`
				Terminated *struct{} `json:"terminated"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

// awaitShards watches the Job's pods until every index has a pod whose
// container has started (and is not one of the excluded pods), and returns
// them by index.
func (c *cluster) awaitShards(t *testing.T, ctx context.Context, name string, exclude ...string) map[int]shardPod {
	t.Helper()
	started := map[int]shardPod{}
	err := c.watch(ctx, fmt.Sprintf("the %d shards of %s to start", shards, name), func(raw json.RawMessage) (bool, error) {
		pod, err := jsonOf[podObject](raw)
		if err != nil {
			return false, err
		}
		index, err := strconv.Atoi(pod.Metadata.Annotations["batch.kubernetes.io/job-completion-index"])
		if err != nil || len(pod.Status.ContainerStatuses) == 0 || slices.Contains(exclude, pod.Metadata.UID) {
			return false, nil
		}
		cs := pod.Status.ContainerStatuses[0]
		if cs.State.Running != nil || cs.State.Terminated != nil {
			started[index] = shardPod{pod.Metadata.Name, pod.Metadata.UID, cs.ContainerID}
		}
		return len(started) == shards, nil
	}, "pods", "-l", "job-name="+name)
	if err != nil {
		t.Fatal(err)
	}
	return started
}

// crash kills a shard's container as a crash or an out-of-memory kill
// would (SIGKILL, through containerd): the pod fails, and the Job controller
// must start another pod for the same index.
func (c *cluster) crash(t *testing.T, ctx context.Context, pod shardPod) {
	t.Helper()
	id, ok := strings.CutPrefix(pod.containerID, "containerd://")
	if !ok {
		t.Fatalf("pod %s: container ID %q is not containerd's", pod.name, pod.containerID)
	}
	c.run(t, ctx, "ctr", "--address", filepath.Join(c.dir, "run", "containerd", "containerd.sock"), "--namespace", "k8s.io",
		"tasks", "kill", "--signal", "SIGKILL", id)
}

// awaitJob watches the Job until it completes (or fails: the test fails)
// and checks its pod counts: every index succeeded, and one pod failed if
// one was killed.
func (c *cluster) awaitJob(t *testing.T, ctx context.Context, name string, oneKilled bool) {
	t.Helper()
	type jobObject struct {
		Status struct {
			Succeeded, Failed int
			Conditions        []struct{ Type, Status, Message string }
		}
	}
	var job jobObject
	err := c.watch(ctx, "job/"+name+" to complete", func(raw json.RawMessage) (bool, error) {
		var err error
		if job, err = jsonOf[jobObject](raw); err != nil {
			return false, err
		}
		for _, cond := range job.Status.Conditions {
			if cond.Status == "True" && cond.Type == "Failed" {
				return false, fmt.Errorf("job/%s failed: %s", name, cond.Message)
			}
			if cond.Status == "True" && cond.Type == "Complete" {
				return true, nil
			}
		}
		return false, nil
	}, "job", name)
	if err != nil {
		t.Fatal(err)
	}
	wantFailed := 0
	if oneKilled {
		wantFailed = 1
	}
	if job.Status.Succeeded != shards || job.Status.Failed != wantFailed {
		t.Errorf("job/%s: %d pods succeeded and %d failed, want %d and %d", name, job.Status.Succeeded, job.Status.Failed, shards, wantFailed)
	}
}

// collectFromClaim collects as docs/scaling-out.md tells with the
// ReadWriteMany claim: the collector pod merges on the claim, and kubectl
// cp copies the directory out.
func (c *cluster) collectFromClaim(t *testing.T, ctx context.Context, name, into string) {
	t.Helper()
	collector := c.run(t, ctx, c.omnibench, "kube", "render", "--collector", "--name", name, "--image", image, "--linger", "5m")
	c.apply(t, ctx, collector)
	c.kubectl(t, ctx, nil, "wait", "--for=condition=Ready", "pod/"+name+"-collect", "--timeout=3m")
	c.kubectl(t, ctx, nil, "cp", name+"-collect:/results", into)
	status, err := os.ReadFile(filepath.Join(into, "merge-exit-status"))
	if err != nil || strings.TrimSpace(string(status)) != "0" {
		t.Errorf("the collector's merge: exit status %q (%v)", status, err)
	}
}

// collectFromPods collects as the docs tell with --results emptydir: once
// every running pod has logged that its run ended and it waits, kubectl cp
// copies each pod's /results.
func (c *cluster) collectFromPods(t *testing.T, ctx context.Context, name, into string) {
	t.Helper()
	out := c.kubectl(t, ctx, nil, "get", "pods", "-l", "job-name="+name, "--field-selector=status.phase=Running", "-o", "name")
	pods := strings.Fields(string(out))
	if len(pods) != shards {
		t.Fatalf("running pods of %s: %v, want %d", name, pods, shards)
	}
	for _, pod := range pods {
		pod = strings.TrimPrefix(pod, "pod/")
		if err := c.awaitLogLine(ctx, pod, "for kubectl cp"); err != nil {
			t.Fatal(err)
		}
		c.kubectl(t, ctx, nil, "cp", pod+":/results", into)
	}
}

// awaitLogLine follows a pod's log until a line holds want.
func (c *cluster) awaitLogLine(ctx context.Context, pod, want string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.dir, "bin", "kubectl"), "logs", "-f", pod)
	cmd.Env = c.env()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Wait()
	defer cancel()
	var last []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), want) {
			return nil
		}
		if last = append(last, sc.Text()); len(last) > 20 {
			last = last[1:]
		}
	}
	return fmt.Errorf("pod %s: no log line with %q (%v); kubectl: %s; last lines:\n%s", pod, want, context.Cause(ctx), stderr.String(), strings.Join(last, "\n"))
}
