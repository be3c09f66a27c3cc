package kube

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/omnibench/omnibench/scenarios"
)

var update = flag.Bool("update", false, "rewrite the committed manifests in deploy/kubernetes from the examples")

const deployDir = "../../../deploy/kubernetes"

// examples are the committed manifests and the parameters they are
// rendered from; the test keeps them identical.
func examples(t *testing.T) map[string]Params {
	t.Helper()
	sc, err := scenarios.Source("tts-short")
	if err != nil {
		t.Fatal(err)
	}
	base := Params{
		Image: "omnibench:latest", Shards: 4, StartAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		URL: "http://vllm-omni.default.svc:8000", ScenarioYAML: sc, RunArgs: []string{"--rate", "40", "-d", "5m"},
	}
	empty := base
	empty.Results = ResultsEmptyDir
	return map[string]Params{"omnibench.yaml": base, "omnibench-emptydir.yaml": empty}
}

// docs splits a YAML stream into its documents, dropping comment-only ones.
func docs(data []byte) [][]byte {
	var out [][]byte
	for _, d := range bytes.Split(data, []byte("\n---\n")) {
		var body [][]byte
		for _, line := range bytes.Split(d, []byte("\n")) {
			if !bytes.HasPrefix(line, []byte("#")) && string(line) != "---" {
				body = append(body, line)
			}
		}
		if b := bytes.TrimSpace(bytes.Join(body, []byte("\n"))); len(b) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// decoded is a manifest stream decoded strictly into the API types.
type decoded struct {
	configMaps []*corev1.ConfigMap
	claims     []*corev1.PersistentVolumeClaim
	jobs       []*batchv1.Job
	pods       []*corev1.Pod
}

// decodeStrict decodes every document into its kind's API type, rejecting
// unknown fields and duplicate keys (UnmarshalStrict), and any kind the
// design does not use.
func decodeStrict(t *testing.T, name string, data []byte) decoded {
	t.Helper()
	var d decoded
	for i, doc := range docs(data) {
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &kind); err != nil {
			t.Fatalf("%s: document %d: %v", name, i+1, err)
		}
		var err error
		switch kind.Kind {
		case "ConfigMap":
			var o corev1.ConfigMap
			err = yaml.UnmarshalStrict(doc, &o)
			d.configMaps = append(d.configMaps, &o)
		case "PersistentVolumeClaim":
			var o corev1.PersistentVolumeClaim
			err = yaml.UnmarshalStrict(doc, &o)
			d.claims = append(d.claims, &o)
		case "Job":
			var o batchv1.Job
			err = yaml.UnmarshalStrict(doc, &o)
			d.jobs = append(d.jobs, &o)
		case "Pod":
			var o corev1.Pod
			err = yaml.UnmarshalStrict(doc, &o)
			d.pods = append(d.pods, &o)
		default:
			t.Fatalf("%s: document %d: unexpected kind %q", name, i+1, kind.Kind)
		}
		if err != nil {
			t.Fatalf("%s: document %d (%s): %v", name, i+1, kind.Kind, err)
		}
	}
	return d
}

// The strict decoder is what makes the manifest tests mean something: a
// misspelt field must fail.
func TestDecodeStrictRejectsUnknownFields(t *testing.T) {
	var job batchv1.Job
	bad := []byte("apiVersion: batch/v1\nkind: Job\nspec:\n  completionMod: Indexed\n")
	if err := yaml.UnmarshalStrict(bad, &job); err == nil || !strings.Contains(err.Error(), "completionMod") {
		t.Errorf("a misspelt field decoded: %v", err)
	}
}

// checkTest asserts what the design depends on in a rendered test.
func checkTest(t *testing.T, name string, p Params, d decoded) {
	t.Helper()
	p.defaults()
	if len(d.jobs) != 1 || len(d.configMaps) != 1 {
		t.Fatalf("%s: %d jobs, %d config maps; want one each", name, len(d.jobs), len(d.configMaps))
	}
	job, cm := d.jobs[0], d.configMaps[0]
	s := job.Spec
	n := int32(p.Shards)
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion ||
		s.Completions == nil || *s.Completions != n || s.Parallelism == nil || *s.Parallelism != n {
		t.Errorf("%s: job spec mode %v completions %v parallelism %v; want Indexed, %d, %d", name, s.CompletionMode, s.Completions, s.Parallelism, n, n)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 1 || s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds != int64(p.Deadline/time.Second) {
		t.Errorf("%s: retries per index %v, deadline %v", name, s.BackoffLimitPerIndex, s.ActiveDeadlineSeconds)
	}
	pod := s.Template
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restart policy %q", name, pod.Spec.RestartPolicy)
	}
	port := fmt.Sprint(p.MetricsPort)
	if a := pod.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != port || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("%s: pod annotations %v", name, a)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%s: %d containers", name, len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	flagValue := func(flag string) string {
		i := slices.Index(c.Args, flag)
		if i < 0 || i+1 >= len(c.Args) {
			t.Errorf("%s: no %s in the run arguments %q", name, flag, c.Args)
			return ""
		}
		return c.Args[i+1]
	}
	if c.Args[0] != "run" || flagValue("--shard") != fmt.Sprintf("auto/%d", p.Shards) ||
		flagValue("--start-at") != p.StartAt.UTC().Format(time.RFC3339Nano) || flagValue("--url") != p.URL {
		t.Errorf("%s: run arguments %q", name, c.Args)
	}
	if !slices.Equal(c.Args[len(c.Args)-len(p.RunArgs):], p.RunArgs) {
		t.Errorf("%s: the run flags %q are not passed as given: %q", name, p.RunArgs, c.Args)
	}
	// Each pod writes its own files, named by the index Kubernetes expands.
	if flagValue("--out") != ResultsDir+"/shard-$(JOB_COMPLETION_INDEX).jsonl" || flagValue("--save-scrapes") != ResultsDir+"/shard-$(JOB_COMPLETION_INDEX)" {
		t.Errorf("%s: results files %q", name, c.Args)
	}
	if flagValue("--metrics-addr") != ":"+port || len(c.Ports) != 1 || fmt.Sprint(c.Ports[0].ContainerPort) != port {
		t.Errorf("%s: exporter address %q, ports %v", name, flagValue("--metrics-addr"), c.Ports)
	}
	// $(JOB_COMPLETION_INDEX) expands only from a declared variable.
	if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == IndexEnv }); i < 0 ||
		c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil ||
		c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("%s: env %+v does not declare %s from the index annotation", name, c.Env, IndexEnv)
	}
	// The scenario: the flag points into the ConfigMap's mount.
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("%s: mount %s of an undeclared volume %s", name, m.MountPath, m.Name)
		}
	}
	scen := flagValue("--scenario")
	if dir, key := filepath.Dir(scen), filepath.Base(scen); volumes[mounts[dir]].ConfigMap == nil ||
		volumes[mounts[dir]].ConfigMap.Name != cm.Name || cm.Data[key] != string(p.ScenarioYAML) {
		t.Errorf("%s: --scenario %s is not the ConfigMap %s's scenario", name, scen, cm.Name)
	}
	results := volumes[mounts[ResultsDir]]
	switch p.Results {
	case ResultsPVC:
		if len(d.claims) != 1 || results.PersistentVolumeClaim == nil || results.PersistentVolumeClaim.ClaimName != d.claims[0].Name ||
			!slices.Equal(d.claims[0].Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) {
			t.Errorf("%s: results volume %+v, claims %+v; want a ReadWriteMany claim", name, results, d.claims)
		}
		if c.Command[0] != "omnibench" {
			t.Errorf("%s: command %q", name, c.Command)
		}
	case ResultsEmptyDir:
		if len(d.claims) != 0 || results.EmptyDir == nil {
			t.Errorf("%s: results volume %+v with %d claims; want an emptyDir", name, results, len(d.claims))
		}
		if len(c.Command) != 4 || c.Command[0] != "/bin/sh" || !strings.Contains(c.Command[2], fmt.Sprintf("sleep %d", int(p.Linger.Seconds()))) ||
			!strings.Contains(c.Command[2], "exit $code") {
			t.Errorf("%s: command %q does not linger for kubectl cp", name, c.Command)
		}
	}
}

// The committed manifests are what render prints for the examples, and
// both decode strictly into the API types with the fields the design
// depends on.
func TestCommittedManifests(t *testing.T) {
	for file, p := range examples(t) {
		var rendered bytes.Buffer
		if err := Render(&rendered, p); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(deployDir, file)
		if *update {
			if err := os.WriteFile(path, rendered.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		committed, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./kube -update to write it)", err)
		}
		if !bytes.Equal(committed, rendered.Bytes()) {
			t.Errorf("%s differs from what render prints for its example (go test ./kube -update rewrites it)", path)
		}
		checkTest(t, path, p, decodeStrict(t, path, committed))
	}
	var collector bytes.Buffer
	p := examples(t)["omnibench.yaml"]
	if err := RenderCollector(&collector, p); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(deployDir, "collect.yaml")
	if *update {
		if err := os.WriteFile(path, collector.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(committed, collector.Bytes()) {
		t.Errorf("%s differs from render --collector (%v)", path, err)
	}
	d := decodeStrict(t, path, committed)
	objs, _ := Objects(p)
	claim := objs[1].(*corev1.PersistentVolumeClaim).Name
	if len(d.pods) != 1 || d.pods[0].Spec.Volumes[0].PersistentVolumeClaim.ClaimName != claim ||
		!strings.Contains(d.pods[0].Spec.Containers[0].Command[2], "omnibench merge /results/shard-*.jsonl --out /results/merged.jsonl") {
		t.Errorf("%s: collector %+v does not merge the test's claim %s", path, d.pods, claim)
	}
	if probe := d.pods[0].Spec.Containers[0].ReadinessProbe; probe == nil || probe.Exec == nil ||
		!slices.Equal(probe.Exec.Command, []string{"test", "-e", "/results/merge-exit-status"}) ||
		!strings.Contains(d.pods[0].Spec.Containers[0].Command[2], "echo $code > /results/merge-exit-status") {
		t.Errorf("%s: the collector is not ready exactly when the merge has ended: %+v", path, probe)
	}
}

func TestRenderVariants(t *testing.T) {
	p := examples(t)["omnibench.yaml"]
	p.Shards, p.Name, p.Namespace, p.MetricsPort = 7, "tts-night", "bench", 9500
	p.PromptsName, p.Prompts = "prompts-mine.txt", []byte("hello\nworld\n")
	p.APIKeySecret, p.StorageClass = "vllm-key", "nfs"
	var out bytes.Buffer
	if err := Render(&out, p); err != nil {
		t.Fatal(err)
	}
	d := decodeStrict(t, "variant", out.Bytes())
	checkTest(t, "variant", p, d)
	job, cm, pvc := d.jobs[0], d.configMaps[0], d.claims[0]
	if job.Name != "tts-night" || job.Namespace != "bench" || cm.Namespace != "bench" || *pvc.Spec.StorageClassName != "nfs" {
		t.Errorf("names %s/%s, %s, class %v", job.Namespace, job.Name, cm.Namespace, pvc.Spec.StorageClassName)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if i := slices.Index(c.Args, "--prompts"); i < 0 || c.Args[i+1] != ConfigDir+"/prompts-mine.txt" || cm.Data["prompts-mine.txt"] != "hello\nworld\n" {
		t.Errorf("prompts: args %q, config map keys %v", c.Args, cm.Data)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "OMNIBENCH_API_KEY" && e.ValueFrom.SecretKeyRef.Name == "vllm-key" && e.ValueFrom.SecretKeyRef.Key == "api-key"
	}) || slices.Contains(c.Args, "--api-key") {
		t.Errorf("API key: env %+v, args %q", c.Env, c.Args)
	}
}

func TestRenderRefuses(t *testing.T) {
	p := examples(t)["omnibench.yaml"]
	for _, tc := range []struct {
		edit    func(*Params)
		mention string
	}{
		{func(p *Params) { p.Shards = 0 }, "--shards 0"},
		{func(p *Params) { p.URL = "" }, "--url"},
		{func(p *Params) { p.Image = "" }, "--image"},
		{func(p *Params) { p.StartAt = time.Time{} }, "--start-at"},
		{func(p *Params) { p.Results = "s3" }, `--results "s3"`},
		{func(p *Params) { p.Memory = "lots" }, `--memory "lots"`},
	} {
		q := p
		tc.edit(&q)
		if err := Render(new(bytes.Buffer), q); err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("error %v, want one mentioning %q", err, tc.mention)
		}
	}
	p.Results = ResultsEmptyDir
	if err := RenderCollector(new(bytes.Buffer), p); err == nil || !strings.Contains(err.Error(), "kubectl cp from each pod") {
		t.Errorf("a collector for per-pod emptyDirs: %v", err)
	}
}

// The Prometheus scrape configuration that collects every pod's exporter
// is valid for Prometheus itself (checked with promtool when installed).
// Debian's Prometheus is built without Kubernetes discovery: there the
// test checks everything else (the relabelling) with a static target in
// place of the pod discovery, and says so.
func TestPrometheusScrapeConfig(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed")
	}
	path := filepath.Join(deployDir, "prometheus-scrape.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, cfg []byte) string {
		file := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(file, cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(promtool, "check", "config", "--syntax-only", file).CombinedOutput()
		if err != nil {
			return string(out)
		}
		return ""
	}
	msg := check("prometheus.yaml", data)
	if msg == "" {
		return
	}
	if !strings.Contains(msg, "field kubernetes_sd_configs not found") {
		t.Fatalf("promtool check config %s:\n%s", path, msg)
	}
	const sd = "    kubernetes_sd_configs:\n      - role: pod\n"
	if !bytes.Contains(data, []byte(sd)) {
		t.Fatalf("%s: no pod discovery block %q", path, sd)
	}
	static := bytes.Replace(data, []byte(sd), []byte("    static_configs:\n      - targets: [\"127.0.0.1:9464\"]\n"), 1)
	if msg := check("static.yaml", static); msg != "" {
		t.Errorf("promtool check config %s (pod discovery replaced by a static target):\n%s", path, msg)
	}
	t.Logf("this promtool has no Kubernetes discovery: checked %s with a static target in its place", path)
}
