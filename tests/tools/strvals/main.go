// Command helmvalues merges values exactly as Helm's CLI does (its own
// values.Options.MergeValues: -f files, then --set-json, --set,
// --set-string, --set-file, --set-literal), for asogen's differential
// tests.
//
// Each line of standard input is one case: a JSON array of arguments, e.g.
// ["--set", "a=1", "-f", "v.yaml"]. Each line of standard output is its
// answer: {"values": {...}} or {"error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/getter"
)

type answer struct {
	Values map[string]any `json:"values,omitempty"`
	Error  string         `json:"error,omitempty"`
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
		case "--set-file":
			opts.FileValues = append(opts.FileValues, value)
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

func merge(args []string) answer {
	opts, err := options(args)
	if err != nil {
		return answer{Error: err.Error()}
	}
	merged, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return answer{Error: err.Error()}
	}
	return answer{Values: merged}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var args []string
		if err := json.Unmarshal(in.Bytes(), &args); err != nil {
			fmt.Fprintf(os.Stderr, "bad case %q: %v\n", in.Text(), err)
			os.Exit(2)
		}
		if err := out.Encode(merge(args)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
