package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// renderedObjects decodes kube render's output strictly (unknown fields
// rejected) into the Job and the ConfigMap.
func renderedObjects(t *testing.T, out string) (*batchv1.Job, *corev1.ConfigMap) {
	t.Helper()
	var job *batchv1.Job
	var cm *corev1.ConfigMap
	for _, doc := range strings.Split(out, "\n---\n")[1:] {
		var kind struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &kind); err != nil {
			t.Fatal(err)
		}
		switch kind.Kind {
		case "Job":
			job = &batchv1.Job{}
			if err := yaml.UnmarshalStrict([]byte(doc), job); err != nil {
				t.Fatal(err)
			}
		case "ConfigMap":
			cm = &corev1.ConfigMap{}
			if err := yaml.UnmarshalStrict([]byte(doc), cm); err != nil {
				t.Fatal(err)
			}
		}
	}
	if job == nil || cm == nil {
		t.Fatalf("no Job or ConfigMap in:\n%s", out)
	}
	return job, cm
}

func TestKubeRenderCmd(t *testing.T) {
	dir := t.TempDir()
	prompts := filepath.Join(dir, "mine.txt")
	if err := os.WriteFile(prompts, []byte("one prompt\nanother prompt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(dir, "night.yaml")
	if err := os.WriteFile(scenario, []byte("name: night\nkind: speech\nmodel: m\nprompts:\n  source: "+prompts+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	out, _, code, err := runMetricsCmd(t, "kube", "render", "--shards", "3", "--url", "http://tts.bench.svc:8000",
		"--scenario", scenario, "--start-at", "+90s", "--", "--rate", "30", "-n", "300")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	job, cm := renderedObjects(t, out)
	if *job.Spec.Completions != 3 || *job.Spec.Parallelism != 3 || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("job spec %+v", job.Spec)
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	value := func(flag string) string {
		i := slices.Index(args, flag)
		if i < 0 {
			t.Fatalf("no %s in %q", flag, args)
		}
		return args[i+1]
	}
	at, err := time.Parse(time.RFC3339Nano, value("--start-at"))
	if err != nil || at.Before(before.Add(90*time.Second)) || at.After(time.Now().Add(90*time.Second)) {
		t.Errorf("--start-at %s (%v): want 90 s after the render", value("--start-at"), err)
	}
	if value("--shard") != "auto/3" || value("--rate") != "30" || value("-n") != "300" || value("--prompts") != "/etc/omnibench/prompts-mine.txt" {
		t.Errorf("run arguments %q", args)
	}
	if cm.Data["prompts-mine.txt"] != "one prompt\nanother prompt\n" || !strings.Contains(cm.Data["scenario.yaml"], "name: night") {
		t.Errorf("config map %v", cm.Data)
	}

	out, _, code, err = runMetricsCmd(t, "kube", "render", "--collector", "--name", "night")
	if code != 0 || !strings.Contains(out, "claimName: night-results") {
		t.Errorf("--collector: exit %d (%v):\n%s", code, err, out)
	}

	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--shards", "3"}, "--url"},
		{[]string{"--shards", "3", "--url", "http://x", "--", "--shard", "1/3"}, "--shard after --: render sets it"},
		{[]string{"--shards", "3", "--url", "http://x", "--", "--api-key", "k"}, "--api-key-secret"},
		{[]string{"--shards", "3", "--url", "http://x", "--", "-c", "2", "-n", "9"}, "concurrency 2 is split over 3 shards"},
		{[]string{"--shards", "3", "--url", "http://x", "--", "--bogus"}, "bogus"},
		{[]string{"--shards", "3", "--url", "http://x", "--start-at", "noon"}, "RFC 3339"},
		{[]string{"--shards", "3", "--url", "http://x", "--scenario", filepath.Join(dir, "none.yaml")}, "none.yaml"},
		{[]string{"--shards", "3", "--url", "http://x", "stray"}, "after --"},
		// Refused as run refuses them, so that no pod exits 2.
		{[]string{"--shards", "3", "--url", "vllm:8000"}, `--url "vllm:8000": want an http:// or https:// URL`},
		{[]string{"--shards", "3", "--url", "http://x", "--", "--slo", "bogus<1"}, `unknown figure "bogus"`},
		{[]string{"--shards", "3", "--url", "http://x", "--", "--max-error-rate", "2"}, "--max-error-rate 2"},
	} {
		_, _, code, err := runMetricsCmd(t, append([]string{"kube", "render"}, tc.args...)...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("kube render %q: exit %d (%v), want 2 mentioning %q", tc.args, code, err, tc.mention)
		}
	}
}
