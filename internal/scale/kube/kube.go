// Package kube builds the Kubernetes manifests that run one omnibench test
// as N pods: an Indexed Job whose pod I runs `omnibench run --shard auto/N`
// (Kubernetes sets JOB_COMPLETION_INDEX to I) with one agreed --start-at, a
// ConfigMap holding the scenario (and its prompts file), and a volume for
// the results that `omnibench merge` then joins.
//
// The manifests are built as the Kubernetes API types (k8s.io/api), not as
// text, so that what `omnibench kube render` prints and what
// deploy/kubernetes/ holds are the API's own objects; the tests decode them
// back strictly (unknown fields rejected).
package kube

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Results volumes.
const (
	ResultsPVC      = "pvc"      // a ReadWriteMany PersistentVolumeClaim shared by every pod
	ResultsEmptyDir = "emptydir" // a per-pod emptyDir; the pod lingers so `kubectl cp` can fetch its files
)

// Paths inside the pods.
const (
	ConfigDir  = "/etc/omnibench"
	ResultsDir = "/results"
	// ScenarioKey is the scenario's key in the ConfigMap and its file name
	// under ConfigDir.
	ScenarioKey = "scenario.yaml"
	// IndexEnv is the variable the Job controller sets to the pod's index;
	// run's --shard auto/N reads it.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// indexAnnotation is where the Job controller writes the index on the pod.
	indexAnnotation = "batch.kubernetes.io/job-completion-index"
)

// MaxShards is the most pods one rendered test may have (as load.MaxShards).
const MaxShards = 1024

// Params are the inputs of Render. Zero values take the defaults noted.
type Params struct {
	Name      string // object names and the job-name label; default "omnibench"
	Namespace string // default: none (kubectl's current namespace)
	Image     string // container image with omnibench on its PATH; required
	Shards    int    // N: completions = parallelism = N; required
	StartAt   time.Time
	URL       string // the server's (Service's) base URL; required

	ScenarioYAML []byte // the scenario file's text, put in the ConfigMap
	// PromptsName and Prompts are a prompts file to put beside the scenario
	// (its base name keeps the extension that says JSONL or text); empty:
	// the scenario's built-in prompts.
	PromptsName string
	Prompts     []byte

	// RunArgs are further `omnibench run` flags, passed as given.
	RunArgs []string
	// APIKeySecret names a Secret whose key "api-key" becomes
	// $OMNIBENCH_API_KEY, so the key is never in a manifest.
	APIKeySecret string

	Results      string            // ResultsPVC (default) or ResultsEmptyDir
	StorageClass string            // PVC storage class; default: the cluster's default
	Storage      string            // PVC size; default "1Gi"
	Linger       time.Duration     // emptydir: how long a finished pod waits for kubectl cp; default 10m
	MetricsPort  int               // the client-side exporter's port; default 9464
	CPU, Memory  string            // requests (and memory limit) per pod; default "1" and "512Mi"
	Deadline     time.Duration     // the Job's activeDeadlineSeconds; default 1h
	Labels       map[string]string // extra labels on every object and pod
}

func (p *Params) defaults() {
	if p.Name == "" {
		p.Name = "omnibench"
	}
	if p.Results == "" {
		p.Results = ResultsPVC
	}
	if p.Storage == "" {
		p.Storage = "1Gi"
	}
	if p.Linger == 0 {
		p.Linger = 10 * time.Minute
	}
	if p.MetricsPort == 0 {
		p.MetricsPort = 9464
	}
	if p.CPU == "" {
		p.CPU = "1"
	}
	if p.Memory == "" {
		p.Memory = "512Mi"
	}
	if p.Deadline == 0 {
		p.Deadline = time.Hour
	}
}

// Validate reports every unusable parameter, naming its flag.
func (p Params) Validate() error {
	p.defaults()
	return p.validate()
}

func (p *Params) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.Shards < 1 || p.Shards > MaxShards {
		bad("--shards %d: want 1 to %d pods", p.Shards, MaxShards)
	}
	if p.Image == "" {
		bad("--image: the container image with omnibench is required")
	}
	if p.URL == "" {
		bad("--url: the server's Service URL (e.g. http://vllm-omni.default.svc:8000) is required")
	}
	if p.StartAt.IsZero() {
		bad("--start-at: an agreed start time is required")
	}
	if len(p.ScenarioYAML) == 0 {
		bad("--scenario: no scenario text")
	}
	switch p.Results {
	case ResultsPVC, ResultsEmptyDir:
	default:
		bad("--results %q: want %s or %s", p.Results, ResultsPVC, ResultsEmptyDir)
	}
	for _, q := range []struct{ flag, v string }{{"--storage", p.Storage}, {"--cpu", p.CPU}, {"--memory", p.Memory}} {
		if _, err := resource.ParseQuantity(q.v); err != nil {
			bad("%s %q: not a Kubernetes quantity: %v", q.flag, q.v, err)
		}
	}
	if p.MetricsPort < 1 || p.MetricsPort > 65535 {
		bad("--metrics-port %d: want 1 to 65535", p.MetricsPort)
	}
	if p.Linger < 0 || p.Deadline < 0 {
		bad("--linger %v and --deadline %v must not be negative", p.Linger, p.Deadline)
	}
	if strings.ContainsAny(p.PromptsName, "/\\") {
		bad("prompts file name %q must be a base name", p.PromptsName)
	}
	return errors.Join(errs...)
}

// Objects builds the test's objects: the ConfigMap, the PVC (ResultsPVC
// only) and the Indexed Job, in the order to apply them.
func Objects(p Params) ([]runtime.Object, error) {
	p.defaults()
	if err := p.validate(); err != nil {
		return nil, err
	}
	labels := map[string]string{"app.kubernetes.io/name": "omnibench", "app.kubernetes.io/instance": p.Name}
	for k, v := range p.Labels {
		labels[k] = v
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: copyMap(labels)}
	}

	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(p.Name + "-scenario"),
		Data:       map[string]string{ScenarioKey: string(p.ScenarioYAML)},
	}
	if p.PromptsName != "" {
		cm.Data[p.PromptsName] = string(p.Prompts)
	}
	objs := []runtime.Object{cm}

	resultsVolume := corev1.Volume{Name: "results"}
	if p.Results == ResultsPVC {
		pvc := &corev1.PersistentVolumeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: meta(p.Name + "-results"),
			Spec: corev1.PersistentVolumeClaimSpec{
				// Every pod writes its own files at once: the volume must be
				// mountable by many nodes.
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(p.Storage)},
				},
			},
		}
		if p.StorageClass != "" {
			pvc.Spec.StorageClassName = &p.StorageClass
		}
		objs = append(objs, pvc)
		resultsVolume.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}
	} else {
		resultsVolume.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}

	n := int32(p.Shards)
	indexed := batchv1.IndexedCompletion
	deadline := int64(p.Deadline / time.Second)
	// A failed pod is retried once for its own index (the retry overwrites
	// the index's files; see merge for two files of one index).
	perIndex := int32(1)
	podLabels := copyMap(labels)
	podLabels["omnibench/test"] = p.Name

	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(p.Name),
		Spec: batchv1.JobSpec{
			CompletionMode:        &indexed,
			Completions:           &n,
			Parallelism:           &n,
			BackoffLimitPerIndex:  &perIndex,
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: podLabels,
					// Prometheus' usual kubernetes_sd pod relabelling scrapes
					// pods by these annotations (see prometheus-scrape.yaml).
					Annotations: map[string]string{
						"prometheus.io/scrape": "true",
						"prometheus.io/port":   strconv.Itoa(p.MetricsPort),
						"prometheus.io/path":   "/metrics",
					},
				},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{container(p)},
					Volumes: []corev1.Volume{
						{Name: "scenario", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
						resultsVolume,
					},
				},
			},
		},
	}
	return append(objs, job), nil
}

// RunArgs is the `omnibench run` command line of every pod.
func RunArgs(p Params) []string {
	p.defaults()
	file := path.Join(ResultsDir, "shard-$("+IndexEnv+")")
	args := []string{"run",
		"--url", p.URL,
		"--scenario", path.Join(ConfigDir, ScenarioKey),
		"--shard", "auto/" + strconv.Itoa(p.Shards),
		"--start-at", p.StartAt.UTC().Format(time.RFC3339Nano),
		"--out", file + ".jsonl",
		"--save-scrapes", file,
		"--summary", file + ".summary.json",
		"--metrics-addr", ":" + strconv.Itoa(p.MetricsPort),
	}
	if p.PromptsName != "" {
		args = append(args, "--prompts", path.Join(ConfigDir, p.PromptsName))
	}
	return append(args, p.RunArgs...)
}

func container(p Params) corev1.Container {
	c := corev1.Container{
		Name:    "omnibench",
		Image:   p.Image,
		Command: []string{"omnibench"},
		Args:    RunArgs(p),
		Env: []corev1.EnvVar{{
			// The Job controller sets it too; declaring it makes the
			// $(JOB_COMPLETION_INDEX) in the arguments expand on any version.
			Name: IndexEnv,
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
				FieldPath: "metadata.annotations['" + indexAnnotation + "']"}},
		}},
		Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: int32(p.MetricsPort), Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(p.CPU), corev1.ResourceMemory: resource.MustParse(p.Memory)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(p.Memory)},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "scenario", MountPath: ConfigDir, ReadOnly: true},
			{Name: "results", MountPath: ResultsDir},
		},
	}
	if p.APIKeySecret != "" {
		c.Env = append(c.Env, corev1.EnvVar{Name: "OMNIBENCH_API_KEY", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: p.APIKeySecret}, Key: "api-key"}}})
	}
	if p.Results == ResultsEmptyDir {
		// The files live and die with the pod: it waits after the run so
		// that `kubectl cp` can fetch them, and keeps run's exit status.
		linger := strconv.FormatInt(int64(p.Linger/time.Second), 10)
		c.Command = []string{"/bin/sh", "-c", `omnibench "$@"; code=$?; echo "omnibench: results in ` + ResultsDir + `, waiting ` + linger + `s for kubectl cp" >&2; sleep ` + linger + `; exit $code`, "omnibench"}
	}
	return c
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Render writes the objects as one multi-document YAML stream for
// `kubectl apply -f -`, after a comment saying what they run.
func Render(w io.Writer, p Params) error {
	objs, err := Objects(p)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# omnibench kube render: %d shards of one test against %s, measured from %s.\n",
		p.Shards, p.URL, p.StartAt.UTC().Format(time.RFC3339Nano))
	buf.WriteString("# Apply with kubectl apply -f -; merge /results/shard-*.jsonl with omnibench merge.\n")
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("kube: encode %T: %w", o, err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	_, err = buf.WriteTo(w)
	return err
}

// CollectorName is the name of the collector pod of test name.
func CollectorName(name string) string { return name + "-collect" }

// Collector is a pod that mounts the test's results claim, merges the
// shards' files into /results/merged.jsonl and stays up for --linger, so
// `kubectl cp` can fetch the results (a ReadWriteMany claim is not
// readable from outside the cluster otherwise).
func Collector(p Params) (*corev1.Pod, error) {
	p.defaults()
	if p.Image == "" {
		return nil, errors.New("--image: the container image with omnibench is required")
	}
	if p.Results != ResultsPVC {
		return nil, fmt.Errorf("--collector needs --results %s: with %s each pod keeps its own files (kubectl cp from each pod)", ResultsPVC, p.Results)
	}
	linger := strconv.FormatInt(int64(p.Linger/time.Second), 10)
	merged := path.Join(ResultsDir, "merged.jsonl")
	done := path.Join(ResultsDir, "merge-exit-status")
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: CollectorName(p.Name), Namespace: p.Namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "omnibench", "app.kubernetes.io/instance": p.Name}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:  "collect",
				Image: p.Image,
				Command: []string{"/bin/sh", "-c", "rm -f " + done + "; omnibench merge " + ResultsDir + "/shard-*.jsonl --out " + merged +
					"; code=$?; echo $code > " + done + "; sleep " + linger + "; exit $code"},
				VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir}},
				// Ready once the merge has ended (its exit status is in the
				// file), so `kubectl wait --for=condition=Ready` then cp.
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-e", done}}},
					PeriodSeconds: 2,
				},
			}},
			Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: p.Name + "-results"}}}},
		},
	}, nil
}

// RenderCollector writes the collector pod as YAML.
func RenderCollector(w io.Writer, p Params) error {
	pod, err := Collector(p)
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(pod)
	if err != nil {
		return fmt.Errorf("kube: encode the collector pod: %w", err)
	}
	_, err = fmt.Fprintf(w, "# omnibench kube render --collector: merges %s/shard-*.jsonl of test %s into %s/merged.jsonl.\n---\n%s",
		ResultsDir, p.Name, ResultsDir, data)
	return err
}
