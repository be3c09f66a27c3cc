package kubee2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/scale/merge/mergetest"
	"github.com/omnibench/omnibench/load"
)

// enableEnv opts in: the test starts a Kubernetes cluster on this machine.
const enableEnv = "OMNIBENCH_KUBE_E2E"

const shards, seed = 3, 5

// shardedCase is one sharded test run as an Indexed Job.
type shardedCase struct {
	name    string
	load    []string
	cfg     load.Config // the one-process load, for the schedule
	results string      // render's --results
	// killShard1 kills the container of index 1 once, while it waits for
	// --start-at: the Job controller must retry that index.
	killShard1 bool
	startAhead time.Duration // render's --start-at +DURATION
}

// The proof on a real Kubernetes: what `kube render --shards 3` prints is
// accepted by the API server under strict validation, its pods reach the
// simulator's pod, a crashed shard is retried by the Job controller for its
// own index, the results are collected as the docs tell (the collector pod
// and kubectl cp from the claim, or kubectl cp from each lingering pod), and
// the merge is the one-process test: the same schedule to the microsecond,
// the same sequence numbers and prompts, and server deltas equal to the
// merged counts.
func TestShardedTestOnKubernetes(t *testing.T) {
	if os.Getenv(enableEnv) != "1" {
		t.Skipf("%s=1 runs omnibench on a one-node Kubernetes started here (as root, after test/kube/install.sh and test/kube/build.sh)", enableEnv)
	}
	began := time.Now()
	c := startCluster(t)
	url := c.deployServer(t)
	for _, tc := range []shardedCase{
		{name: "open", load: []string{"--rate", "60", "--arrival", "poisson", "-n", "24"},
			cfg: load.Config{Rate: 60, Arrival: load.Poisson, Requests: 24, Seed: seed}, results: "pvc",
			// The retried pod is created after the controller's back-off
			// (10 s on a first failure) and must start before the agreed
			// time for the server's deltas to cover its requests.
			killShard1: true, startAhead: 45 * time.Second},
		{name: "closed", load: []string{"-c", "4", "-n", "18"},
			cfg: load.Config{Concurrency: 4, Requests: 18, Seed: seed}, results: "emptydir", startAhead: 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) { c.runSharded(t, url, tc) })
	}
	t.Logf("the whole test took %v", time.Since(began).Round(time.Second))
}

// deployServer applies deploy/kubernetes/serve.yaml with the test's image,
// waits for the Deployment, and returns the URL of the Service's endpoint.
// The cluster runs neither kube-proxy nor a DNS server, so the pods reach
// the server's pod address that the Service selects, not its name.
func (c *cluster) deployServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	manifest, err := os.ReadFile(filepath.Join(c.root, "deploy", "kubernetes", "serve.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const committed = "image: omnibench:latest"
	if !strings.Contains(string(manifest), committed) {
		t.Fatalf("serve.yaml has no %q to replace", committed)
	}
	c.apply(t, ctx, []byte(strings.Replace(string(manifest), committed, "image: "+image, 1)))
	c.kubectl(t, ctx, nil, "wait", "--for=condition=Available", "deployment/omnibench-serve", "--timeout=4m")
	ip := string(c.kubectl(t, ctx, nil, "get", "endpointslices", "-l", "kubernetes.io/service-name=omnibench-serve",
		"-o", "jsonpath={.items[0].endpoints[0].addresses[0]}"))
	if ip == "" {
		t.Fatal("the Service omnibench-serve has no endpoint")
	}
	return "http://" + ip + ":8000"
}

// runSharded renders, applies, awaits, collects, merges and checks one case.
func (c *cluster) runSharded(t *testing.T, url string, tc shardedCase) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	name := "omnibench-" + tc.name
	// Shard 0 takes the server's after snapshot --settle after its own last
	// response: two seconds cover the other shards' last ones on a busy node.
	common := append([]string{"--seed", fmt.Sprint(seed), "--warmup", "0", "--settle", "2s", "--format", "json"}, tc.load...)
	render := []string{"kube", "render", "--shards", fmt.Sprint(shards), "--name", name, "--url", url,
		"--image", image, "--scenario", "chat-voice", "--start-at", fmt.Sprintf("+%ds", int(tc.startAhead.Seconds())),
		// One node of two cores: the default request of one CPU per pod
		// would leave shards unschedulable.
		"--cpu", "100m", "--memory", "256Mi", "--results", tc.results}
	switch tc.results {
	case "pvc":
		c.hostPathVolume(t, ctx, name, filepath.Join(dir, "volume"))
		render = append(render, "--storage-class", hostPathClass)
	case "emptydir":
		render = append(render, "--linger", "5m")
	}
	manifests := c.run(t, ctx, c.omnibench, append(append(render, "--"), common...)...)
	t.Cleanup(func() { c.deleteTest(t, name) })

	applied := time.Now()
	c.apply(t, ctx, manifests)
	pods := c.awaitShards(t, ctx, name)
	t.Logf("apply to all %d shards running: %v", shards, time.Since(applied).Round(time.Millisecond))
	if tc.killShard1 {
		c.crash(t, ctx, pods[1])
		retried := c.awaitShards(t, ctx, name, pods[1].uid)
		if retried[1].uid == pods[1].uid {
			t.Fatal("index 1 runs in the pod that was killed")
		}
		t.Logf("index 1 retried: the new pod was running %v after the apply", time.Since(applied).Round(time.Millisecond))
	}

	collected := filepath.Join(dir, "results")
	switch tc.results {
	case "pvc":
		c.awaitJob(t, ctx, name, tc.killShard1)
		c.collectFromClaim(t, ctx, name, collected)
	case "emptydir":
		c.collectFromPods(t, ctx, name, collected)
	}
	files, _ := filepath.Glob(filepath.Join(collected, "shard-*.jsonl"))
	if len(files) != shards {
		t.Fatalf("collected %v, want %d shard files", files, shards)
	}
	merged := filepath.Join(dir, "merged.jsonl")
	mergeOut := c.run(t, ctx, c.omnibench, append(append([]string{"merge"}, files...), "--out", merged)...)
	if !strings.Contains(string(mergeOut), "start skew") || strings.Contains(string(mergeOut), "miss") {
		t.Errorf("merge output:\n%s", mergeOut)
	}
	c.checkMerged(t, ctx, url, tc, merged, common)
}

// checkMerged asserts what the one-machine proof (cmd/omnibench's
// TestShardsMergeToTheOneProcessTest) asserts, on the pods' results.
func (c *cluster) checkMerged(t *testing.T, ctx context.Context, url string, tc shardedCase, merged string, common []string) {
	t.Helper()
	h, recs, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if h.Merged == nil || len(h.Merged.Shards) != shards || h.StartAt == "" {
		t.Fatalf("merged header %+v", h)
	}
	late := make([]string, shards)
	for i, s := range h.Merged.Shards {
		late[i] = fmt.Sprintf("%.3f", s.StartLateS*1000)
	}
	t.Logf("%s loop on pods: start skew %.3f ms; lateness per shard (ms): %s", tc.name, h.Merged.StartSkewS*1000, strings.Join(late, ", "))

	bySeq := mergetest.Schedule(t, recs, tc.cfg)

	// The prompts: each sequence number's, as the server counted its
	// tokens, is the one-process run's (run here, against the same pod).
	ref := filepath.Join(filepath.Dir(merged), "one-process.jsonl")
	c.run(t, ctx, c.omnibench, append([]string{"run", "--url", url, "--scenario", "chat-voice", "--out", ref}, common...)...)
	_, refRecs, err := results.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	mergetest.Prompts(t, bySeq, refRecs)
	before, after := mergetest.Snapshots(t, merged)
	mergetest.ServerDeltas(t, before, after, recs)
}

// jsonOf decodes a watched object.
func jsonOf[T any](raw json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}
