// Command helm-template renders a chart as `helm template` does, with
// Helm v4's own code (values.Options.MergeValues, then action.Install in
// client-only dry-run mode: the chart defaults coalesced, the values
// schema checked, the templates rendered), once per case, for asogen's
// differential tests: one chart load, many renders.
//
// Usage: helm-template CHART_DIR NAMESPACE [API_VERSION...]
//
// API_VERSION adds to what .Capabilities.APIVersions has, as `helm
// template --api-versions` does (GROUP/VERSION or GROUP/VERSION/KIND).
//
// Each line of standard input is one case: a JSON array of Helm's values
// flags, e.g. ["-f", "v.yaml", "--set", "a=null"]. Each line of standard
// output is its answer: {"objects": [...]} (every object of the manifest
// and the hooks, as `helm template` prints them, read as JSON as the API
// server reads them) or {"error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/getter"
	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"sigs.k8s.io/yaml"
)

type answer struct {
	Objects []json.RawMessage `json:"objects,omitempty"`
	Error   string            `json:"error,omitempty"`
}

func options(args []string) (*values.Options, error) {
	opts := &values.Options{}
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return nil, fmt.Errorf("flag %s has no value", args[i])
		}
		value := args[i+1]
		switch args[i] {
		case "-f", "--values":
			opts.ValueFiles = append(opts.ValueFiles, value)
		case "--set":
			opts.Values = append(opts.Values, value)
		case "--set-string":
			opts.StringValues = append(opts.StringValues, value)
		case "--set-json":
			opts.JSONValues = append(opts.JSONValues, value)
		case "--set-literal":
			opts.LiteralValues = append(opts.LiteralValues, value)
		default:
			return nil, fmt.Errorf("unknown flag %s", args[i])
		}
	}
	return opts, nil
}

func render(chart *chartv2.Chart, namespace string, apiVersions []string, args []string) answer {
	opts, err := options(args)
	if err != nil {
		return answer{Error: err.Error()}
	}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return answer{Error: err.Error()}
	}
	// What `helm template` sets up (pkg/cmd/template.go): a client-only
	// dry run of an install, with release storage in memory.
	cfg := action.NewConfiguration()
	cfg.Releases = storage.Init(driver.NewMemory())
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = "release-name"
	install.Replace = true
	install.Namespace = namespace
	install.APIVersions = common.VersionSet(apiVersions)
	ri, err := install.Run(chart, vals)
	if err != nil {
		return answer{Error: err.Error()}
	}
	rel, ok := ri.(*release.Release)
	if !ok {
		return answer{Error: fmt.Sprintf("unexpected release type %T", ri)}
	}
	manifests := []string{rel.Manifest}
	for _, hook := range rel.Hooks {
		manifests = append(manifests, hook.Manifest)
	}
	var objects []json.RawMessage
	for _, manifest := range manifests {
		docs := releaseutil.SplitManifests(manifest)
		names := keys(docs)
		sort.Sort(releaseutil.BySplitManifestsOrder(names))
		for _, name := range names {
			object, err := yaml.YAMLToJSON([]byte(docs[name]))
			if err != nil {
				return answer{Error: fmt.Sprintf("%s: %v", name, err)}
			}
			if strings.TrimSpace(string(object)) != "null" {
				objects = append(objects, object)
			}
		}
	}
	return answer{Objects: objects}
}

func keys(docs map[string]string) []string {
	out := make([]string, 0, len(docs))
	for name := range docs {
		out = append(out, name)
	}
	return out
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: helm-template CHART_DIR NAMESPACE [API_VERSION...]")
		os.Exit(2)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	var cases [][]string
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	for in.Scan() {
		var args []string
		if err := json.Unmarshal(in.Bytes(), &args); err != nil {
			fmt.Fprintf(os.Stderr, "bad case %q: %v\n", in.Text(), err)
			os.Exit(2)
		}
		cases = append(cases, args)
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// One worker per CPU, each with its own copy of the chart (an install
	// may change the chart it is given); answers in the cases' order.
	answers := make([]answer, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		chart, err := loader.Load(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "helm-template:", err)
			os.Exit(2)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				answers[i] = render(chart, os.Args[2], os.Args[3:], cases[i])
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	out := json.NewEncoder(os.Stdout)
	for _, a := range answers {
		if err := out.Encode(a); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
}
