// Command helm-names prints every name a template can resolve in the data
// Helm v4's engine hands to a chart's templates and to `tpl`: the keys of
// its maps, the exported fields of its structs and the exported methods of
// every type on the way (a Go template calls a method of the receiver's
// type before it reads a map key: `.Values.YAML` is Values.YAML(), not the
// key "YAML"). asogen's differential test of templated values
// (tests/without_cluster/tpl_meaning.rs) feeds each name to asogen and to the real engine.
//
// The data is built by Helm's own code (util.ToRenderValues, as `helm
// install` and `helm template` build it), plus what the engine adds per
// template (pkg/engine/engine.go: `Template` as a common.Values with Name
// and BasePath, `Files`, `Subcharts`, `Chart.IsRoot`). The engine's files
// type is unexported, so its methods are read from its source
// (pkg/engine/files.go in the Helm module folder given as the argument).
//
// Output: one JSON array of expressions, e.g. [".Values.YAML", ...].
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
)

// maxDepth bounds the walk (the deepest name, .Capabilities.KubeVersion.Major, is 3).
const maxDepth = 4

func exported(name string) bool {
	return name != "" && name[0] >= 'A' && name[0] <= 'Z'
}

// methods: the exported methods a template can call on a value of type t
// (an addressable value also has its pointer's methods).
func methods(t reflect.Type) []string {
	seen := map[string]bool{}
	var out []string
	types := []reflect.Type{t}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		types = append(types, reflect.PointerTo(t))
	}
	for _, t := range types {
		for i := 0; i < t.NumMethod(); i++ {
			name := t.Method(i).Name
			if exported(name) && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

func walk(prefix string, v reflect.Value, depth int, out *[]string) {
	for v.IsValid() && v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if !v.IsValid() || depth > maxDepth {
		return
	}
	for _, m := range methods(v.Type()) {
		*out = append(*out, prefix+"."+m)
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		for _, key := range v.MapKeys() {
			name := prefix + "." + key.String()
			*out = append(*out, name)
			walk(name, v.MapIndex(key), depth+1, out)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			field := v.Type().Field(i)
			if !field.IsExported() {
				continue
			}
			name := prefix + "." + field.Name
			*out = append(*out, name)
			walk(name, v.Field(i), depth+1, out)
		}
	}
}

// filesMethods reads the exported methods of the engine's files type.
func filesMethods(helm string) ([]string, error) {
	path := filepath.Join(helm, "pkg", "engine", "files.go")
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || !exported(fn.Name.Name) {
			continue
		}
		if recv, ok := fn.Recv.List[0].Type.(*ast.Ident); ok && recv.Name == "files" {
			out = append(out, fn.Name.Name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no methods of files", path)
	}
	return out, nil
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: helm-names HELM_MODULE_DIR")
	}
	chart := &chartv2.Chart{Metadata: &chartv2.Metadata{APIVersion: "v2", Name: "probe", Version: "1.0.0"}}
	top, err := util.ToRenderValues(chart, map[string]any{}, common.ReleaseOptions{
		Name: "r", Namespace: "ns", IsInstall: true, Revision: 1,
	}, common.DefaultCapabilities)
	if err != nil {
		return err
	}
	// What the engine adds for each template it renders.
	top["Template"] = common.Values{"Name": "", "BasePath": ""}
	top["Subcharts"] = map[string]any{}
	if meta, ok := top["Chart"].(map[string]any); ok {
		meta["IsRoot"] = true
	}
	var names []string
	walk("", reflect.ValueOf(top), 0, &names)
	files, err := filesMethods(os.Args[1])
	if err != nil {
		return err
	}
	names = append(names, ".Files")
	for _, m := range files {
		names = append(names, ".Files."+m)
	}
	sort.Strings(names)
	return json.NewEncoder(os.Stdout).Encode(names)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "helm-names:", err)
		os.Exit(1)
	}
}
