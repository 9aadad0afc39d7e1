// smd-experiment: what does server-side apply (structured-merge-diff's
// merge.Updater) do to a Deployment's spec.strategy.rollingUpdate when the
// strategy is switched to Recreate?
//
// The program drives SMD's real merge.Updater the way kube-apiserver's field
// manager (k8s.io/apimachinery/pkg/util/managedfields/internal/structuredmerge.go)
// does:
//   - Update (POST/PUT/non-apply PATCH): the incoming object is decoded and
//     DEFAULTED first, then Updater.Update(live, new, ...) computes ownership.
//   - Apply (PATCH application/apply-patch+yaml): the apply config is parsed as
//     unstructured (nulls kept), Updater.Apply(live, config, ...) merges it,
//     then the result is converted to the Go type (null -> nil pointer, i.e.
//     dropped), DEFAULTED, and only then validated. Managed fields come from
//     Updater.Apply and are NOT recomputed after defaulting.
//   - Validation (ValidateDeploymentStrategy): type == Recreate and
//     rollingUpdate != nil -> Forbidden; a failed validation persists nothing.
//
// Manager identifiers follow BuildManagerIdentifier: Update managers are keyed
// by manager+operation+apiVersion, Apply managers by manager+operation.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	yaml "gopkg.in/yaml.v2"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v4/merge"
	"sigs.k8s.io/structured-merge-diff/v4/typed"
)

const apiVersion = fieldpath.APIVersion("apps/v1")

// identityConverter: single version, nothing to convert (like SMD's test fixture).
type identityConverter struct{}

func (identityConverter) Convert(v *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return v, nil
}
func (identityConverter) IsMissingVersionError(error) bool { return false }

func updateID(m string) string {
	return fmt.Sprintf(`{"manager":%q,"operation":"Update","apiVersion":%q}`, m, string(apiVersion))
}
func applyID(m string) string { return fmt.Sprintf(`{"manager":%q,"operation":"Apply"}`, m) }

// server is a tiny simulated kube-apiserver holding one Deployment.
type server struct {
	pt       typed.ParseableType
	up       *merge.Updater
	live     *typed.TypedValue // nil: object does not exist
	managers fieldpath.ManagedFields
}

func (s *server) clone() *server {
	c := *s
	c.managers = s.managers.Copy()
	return &c
}

func (s *server) liveOrEmpty() *typed.TypedValue {
	if s.live != nil {
		return s.live
	}
	tv, err := s.pt.FromUnstructured(map[string]interface{}{})
	must(err)
	return tv
}

// ---------------------------------------------------------------- helpers

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// toMap returns a normalized deep copy of a typed value as JSON-like data
// (string map keys, int64/float64 numbers). Values parsed from YAML carry
// map[interface{}]interface{} internally, hence the normalization.
func toMap(tv *typed.TypedValue) map[string]interface{} {
	m, ok := normalize(tv.AsValue().Unstructured()).(map[string]interface{})
	if !ok {
		panic(fmt.Sprintf("not a map: %#v", tv.AsValue().Unstructured()))
	}
	return m
}

func normalize(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		out := make(map[string]interface{}, len(t))
		for k, e := range t {
			out[k] = normalize(e)
		}
		return out
	case map[interface{}]interface{}:
		out := make(map[string]interface{}, len(t))
		for k, e := range t {
			out[fmt.Sprint(k)] = normalize(e)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(t))
		for i, e := range t {
			out[i] = normalize(e)
		}
		return out
	case int:
		return int64(t)
	case int32:
		return int64(t)
	case float32:
		return float64(t)
	default:
		return t
	}
}

func toYAML(v interface{}) string {
	b, err := yaml.Marshal(v)
	must(err)
	return string(b)
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = pre + lines[i]
	}
	return strings.Join(lines, "\n")
}

// goRoundTrip approximates unstructured -> apps/v1.Deployment -> unstructured
// (runtime.DefaultUnstructuredConverter): a JSON null becomes a nil pointer /
// zero value and is then omitted (all fields involved are omitempty).
func goRoundTrip(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		out := map[string]interface{}{}
		for k, e := range t {
			if e == nil {
				continue
			}
			out[k] = goRoundTrip(e)
		}
		return out
	case []interface{}:
		out := make([]interface{}, 0, len(t))
		for _, e := range t {
			out = append(out, goRoundTrip(e))
		}
		return out
	default:
		return t
	}
}

func sub(m map[string]interface{}, k string) (map[string]interface{}, bool) {
	v, ok := m[k]
	if !ok || v == nil {
		return nil, false
	}
	mm, ok := v.(map[string]interface{})
	return mm, ok
}

func ensure(m map[string]interface{}, k string) map[string]interface{} {
	if mm, ok := sub(m, k); ok {
		return mm
	}
	mm := map[string]interface{}{}
	m[k] = mm
	return mm
}

// k8sDefault mirrors SetDefaults_Deployment (pkg/apis/apps/v1/defaults.go)
// for the fields present in schema.yaml.
func k8sDefault(obj map[string]interface{}) {
	spec := ensure(obj, "spec")
	if _, ok := spec["replicas"]; !ok {
		spec["replicas"] = int64(1)
	}
	strategy := ensure(spec, "strategy")
	if t, _ := strategy["type"].(string); t == "" {
		strategy["type"] = "RollingUpdate"
	}
	if strategy["type"] == "RollingUpdate" {
		ru := ensure(strategy, "rollingUpdate")
		if _, ok := ru["maxUnavailable"]; !ok {
			ru["maxUnavailable"] = "25%"
		}
		if _, ok := ru["maxSurge"]; !ok {
			ru["maxSurge"] = "25%"
		}
	}
	if _, ok := spec["revisionHistoryLimit"]; !ok {
		spec["revisionHistoryLimit"] = int64(10)
	}
	if _, ok := spec["progressDeadlineSeconds"]; !ok {
		spec["progressDeadlineSeconds"] = int64(600)
	}
}

// rollingUpdateState describes spec.strategy.rollingUpdate in an unstructured object.
func rollingUpdateState(obj map[string]interface{}) string {
	spec, ok := sub(obj, "spec")
	if !ok {
		return "absent"
	}
	strategy, ok := sub(spec, "strategy")
	if !ok {
		return "absent"
	}
	v, present := strategy["rollingUpdate"]
	switch {
	case !present:
		return "absent"
	case v == nil:
		return "null"
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// validate mirrors ValidateDeploymentStrategy's Recreate branch:
// Recreate + rollingUpdate present and non-null (even {}) -> Forbidden.
func validate(obj map[string]interface{}) (forbidden bool, msg string) {
	spec, _ := sub(obj, "spec")
	if spec == nil {
		return false, "OK"
	}
	strategy, _ := sub(spec, "strategy")
	if strategy == nil {
		return false, "OK"
	}
	if strategy["type"] == "Recreate" {
		if v, ok := strategy["rollingUpdate"]; ok && v != nil {
			return true, "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"
		}
	}
	return false, "OK"
}

var interesting = []fieldpath.Path{
	fieldpath.MakePathOrDie("spec", "strategy", "type"),
	fieldpath.MakePathOrDie("spec", "strategy", "rollingUpdate"),
	fieldpath.MakePathOrDie("spec", "strategy", "rollingUpdate", "maxSurge"),
	fieldpath.MakePathOrDie("spec", "strategy", "rollingUpdate", "maxUnavailable"),
}

func printManagers(mf fieldpath.ManagedFields) {
	ids := make([]string, 0, len(mf))
	for id := range mf {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fmt.Println("  managedFields:")
	if len(ids) == 0 {
		fmt.Println("    (none)")
	}
	for _, id := range ids {
		vs := mf[id]
		js, err := vs.Set().ToJSON()
		must(err)
		var buf bytes.Buffer
		must(json.Indent(&buf, js, "      ", "  "))
		fmt.Printf("    - id: %s (applied=%v)\n      fieldsV1: %s\n", id, vs.Applied(), buf.String())
	}
	fmt.Println("  owners of strategy paths:")
	for _, p := range interesting {
		var owners []string
		for _, id := range ids {
			if mf[id].Set().Has(p) {
				owners = append(owners, id)
			}
		}
		o := "UNOWNED"
		if len(owners) > 0 {
			o = strings.Join(owners, ", ")
		}
		fmt.Printf("    %-42s %s\n", p.String(), o)
	}
}

// ---------------------------------------------------------------- operations

// Update simulates a create/update/non-apply patch: decode + default, then
// Updater.Update. Returns false if rejected.
func (s *server) Update(manager, objYAML string) bool {
	id := updateID(manager)
	fmt.Printf("\n>>> UPDATE (non-apply write) by %s\n%s\n", id, indent(objYAML, "    | "))
	in, err := s.pt.FromYAML(typed.YAMLObject(objYAML))
	must(err)
	obj := goRoundTrip(toMap(in)).(map[string]interface{})
	k8sDefault(obj) // decode-time defaulting happens BEFORE the field manager
	if f, msg := validate(obj); f {
		fmt.Printf("  RESULT: 422 Invalid: %s (nothing persisted)\n", msg)
		return false
	}
	newTV, err := s.pt.FromUnstructured(obj)
	must(err)
	out, mf, err := s.up.Update(s.liveOrEmpty(), newTV, apiVersion, s.managers.Copy(), id)
	if err != nil {
		fmt.Printf("  RESULT: error: %v\n", err)
		return false
	}
	s.live, s.managers = out, mf
	fmt.Printf("  RESULT: persisted\n  object:\n%s\n", indent(toYAML(toMap(s.live)), "    "))
	printManagers(s.managers)
	return true
}

// Apply simulates a server-side apply PATCH. Returns a one-line outcome.
func (s *server) Apply(manager, cfgYAML string, force bool) string {
	id := applyID(manager)
	fmt.Printf("\n>>> APPLY by %s force=%v\n%s\n", id, force, indent(cfgYAML, "    | "))
	cfg, err := s.pt.FromYAML(typed.YAMLObject(cfgYAML))
	must(err)
	cfgSet, err := cfg.ToFieldSet()
	must(err)
	fmt.Printf("  config.ToFieldSet() has .spec.strategy.rollingUpdate: %v\n",
		cfgSet.Has(fieldpath.MakePathOrDie("spec", "strategy", "rollingUpdate")))

	out, mf, err := s.up.Apply(s.liveOrEmpty(), cfg, apiVersion, s.managers.Copy(), id, force)
	if err != nil {
		fmt.Printf("  RESULT: 409 Conflict (nothing persisted):\n%s\n", indent(err.Error(), "    "))
		return "409 Conflict"
	}
	unchanged := out == nil
	if unchanged {
		out = s.liveOrEmpty()
	}
	raw := toMap(out)
	fmt.Printf("  raw SMD merge result (object unchanged by SMD: %v); rollingUpdate=%s\n%s\n",
		unchanged, rollingUpdateState(raw), indent(toYAML(raw), "    "))

	final := goRoundTrip(raw).(map[string]interface{})
	k8sDefault(final) // structuredMergeManager.Apply defaults AFTER Updater.Apply
	fmt.Printf("  after Go round-trip + SetDefaults_Deployment; rollingUpdate=%s\n", rollingUpdateState(final))
	forbidden, msg := validate(final)
	rawForbidden, _ := validate(raw)
	fmt.Printf("  validation of raw SMD output: forbidden=%v; of final object: forbidden=%v\n", rawForbidden, forbidden)
	if forbidden {
		fmt.Printf("  RESULT: 422 Invalid: %s (nothing persisted)\n", msg)
		fmt.Println("  (managed fields that WOULD have been written:)")
		printManagers(mf)
		return "422 Forbidden; rollingUpdate=" + rollingUpdateState(final)
	}
	finalTV, err := s.pt.FromUnstructured(final)
	must(err)
	s.live, s.managers = finalTV, mf
	fmt.Printf("  RESULT: persisted\n  object:\n%s\n", indent(toYAML(final), "    "))
	printManagers(s.managers)
	return "OK; type=" + fmt.Sprint(final["spec"].(map[string]interface{})["strategy"].(map[string]interface{})["type"]) +
		" rollingUpdate=" + rollingUpdateState(final)
}

// fluxTakeOwnership mimics what Flux kustomize-controller does between its
// server-side dry-run and its real apply (fluxcd/pkg/ssa cleanupMetadata ->
// PatchReplaceFieldsManagers): managedFields entries whose manager name has
// the prefix "kubectl" (Apply or Update), "before-first-apply" (Update) or
// "kustomize-controller" (Update) are merged into the kustomize-controller
// Apply entry. (It is a plain JSON patch of metadata.managedFields.)
func (s *server) fluxTakeOwnership() {
	target := applyID("kustomize-controller")
	merged := fieldpath.NewSet()
	if vs, ok := s.managers[target]; ok {
		merged = vs.Set()
	}
	var taken []string
	for id, vs := range s.managers {
		var e struct{ Manager, Operation string }
		must(json.Unmarshal([]byte(id), &e))
		match := (strings.HasPrefix(e.Manager, "kubectl") && (e.Operation == "Update" || e.Operation == "Apply")) ||
			(e.Manager == "before-first-apply" && e.Operation == "Update") ||
			(e.Manager == "kustomize-controller" && e.Operation == "Update")
		if match && id != target {
			merged = merged.Union(vs.Set())
			delete(s.managers, id)
			taken = append(taken, id)
		}
	}
	sort.Strings(taken)
	s.managers[target] = fieldpath.NewVersionedSet(merged, apiVersion, true)
	fmt.Printf("\n>>> FLUX managedFields takeover (JSON patch, no object change): merged %v into %s\n", taken, target)
	printManagers(s.managers)
}

// fluxApply mimics one kustomize-controller reconcile of one object:
// server-side dry-run apply with force, and only if that succeeds the
// managedFields takeover and the real apply with force.
func (s *server) fluxApply(cfg string) string {
	fmt.Println("\n--- Flux step 1: dry-run apply (force=true) on a copy")
	if out := s.clone().Apply("kustomize-controller", cfg, true); !strings.HasPrefix(out, "OK") {
		return "dry-run failed: " + out + " (Flux stops before its managedFields takeover)"
	}
	fmt.Println("\n--- Flux step 2: managedFields takeover; step 3: real apply (force=true)")
	s.fluxTakeOwnership()
	return s.Apply("kustomize-controller", cfg, true)
}

// ---------------------------------------------------------------- manifests

func deployment(strategyYAML string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  strategy:
` + indent(strategyYAML, "    ") + `
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.25
`
}

var (
	stratRollingFull = "type: RollingUpdate\nrollingUpdate:\n  maxSurge: 25%\n  maxUnavailable: 25%"
	stratRollingBare = "type: RollingUpdate"
	stratRollingD    = "type: RollingUpdate\nrollingUpdate:\n  maxSurge: 1\n  maxUnavailable: 0"
	stratRecreate    = "type: Recreate"
	stratRecreateNul = "type: Recreate\nrollingUpdate: null"
	stratRecreateEmp = "type: Recreate\nrollingUpdate: {}"
)

// ---------------------------------------------------------------- probes

func probes(pt typed.ParseableType) {
	fmt.Println("==================================================================")
	fmt.Println("PROBES: raw typed.Merge / ToFieldSet behaviour with null")
	fmt.Println("==================================================================")
	lhsYAML := `spec:
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 25%
`
	cases := []struct{ name, lhs, rhs string }{
		{"non-empty map  MERGE  rollingUpdate: null", lhsYAML, "spec:\n  strategy:\n    type: Recreate\n    rollingUpdate: null\n"},
		{"non-empty map  MERGE  rollingUpdate: {}", lhsYAML, "spec:\n  strategy:\n    type: Recreate\n    rollingUpdate: {}\n"},
		{"non-empty map  MERGE  (rollingUpdate omitted)", lhsYAML, "spec:\n  strategy:\n    type: Recreate\n"},
		{"empty map {}   MERGE  rollingUpdate: null", "spec:\n  strategy:\n    rollingUpdate: {}\n", "spec:\n  strategy:\n    rollingUpdate: null\n"},
		{"absent         MERGE  rollingUpdate: null", "spec:\n  strategy:\n    type: RollingUpdate\n", "spec:\n  strategy:\n    rollingUpdate: null\n"},
	}
	for _, c := range cases {
		l, err := pt.FromYAML(typed.YAMLObject(c.lhs))
		must(err)
		r, err := pt.FromYAML(typed.YAMLObject(c.rhs))
		must(err)
		m, err := l.Merge(r)
		must(err)
		fmt.Printf("\n[probe] %s\n  result: %s\n", c.name, strings.TrimSpace(toYAMLFlow(toMap(m))))
	}
	for _, c := range []string{
		"spec:\n  strategy:\n    type: Recreate\n    rollingUpdate: null\n",
		"spec:\n  strategy:\n    type: Recreate\n    rollingUpdate: {}\n",
		"spec:\n  strategy:\n    type: Recreate\n",
	} {
		tv, err := pt.FromYAML(typed.YAMLObject(c))
		must(err)
		set, err := tv.ToFieldSet()
		must(err)
		js, _ := set.ToJSON()
		fmt.Printf("\n[probe] ToFieldSet of %q\n  fieldsV1: %s\n  has .spec.strategy.rollingUpdate: %v\n",
			strings.ReplaceAll(c, "\n", " "), js, set.Has(fieldpath.MakePathOrDie("spec", "strategy", "rollingUpdate")))
	}
}

func toYAMLFlow(v interface{}) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ---------------------------------------------------------------- main

type result struct{ name, outcome string }

func main() {
	schemaPath := "schema.yaml"
	if len(os.Args) > 1 {
		schemaPath = os.Args[1]
	}
	b, err := os.ReadFile(schemaPath)
	must(err)
	parser, err := typed.NewParser(typed.YAMLObject(b))
	must(err)
	pt := parser.Type("io.k8s.api.apps.v1.Deployment")
	if !pt.IsValid() {
		panic("Deployment type not found in schema")
	}
	abs, _ := filepath.Abs(schemaPath)
	fmt.Printf("schema: %s\nSMD: sigs.k8s.io/structured-merge-diff/v4 (Debian golang-k8s-sigs-structured-merge-diff-dev)\n\n", abs)

	probes(pt)

	newServer := func() *server {
		// Like kube-apiserver's stripMetaManager: apiVersion, kind and
		// metadata.name/namespace are never tracked as owned fields.
		ignored := fieldpath.NewSet(
			fieldpath.MakePathOrDie("apiVersion"),
			fieldpath.MakePathOrDie("kind"),
			fieldpath.MakePathOrDie("metadata", "name"),
			fieldpath.MakePathOrDie("metadata", "namespace"),
		)
		up := &merge.Updater{Converter: identityConverter{}, IgnoredFields: map[fieldpath.APIVersion]*fieldpath.Set{apiVersion: ignored}}
		return &server{pt: pt, up: up, managers: fieldpath.ManagedFields{}}
	}
	var results []result
	rec := func(name, outcome string) {
		results = append(results, result{name, outcome})
		fmt.Printf("  ==> %s: %s\n", name, outcome)
	}
	section := func(title string) {
		fmt.Printf("\n\n==================================================================\n%s\n==================================================================\n", title)
	}

	// ---- A: created by Update (kubectl create / client-side apply / Helm 3)
	section("SCENARIO A: created by Update (kubectl-client-side-apply), then Apply {type: Recreate} by kustomize-controller")
	a := newServer()
	a.Update("kubectl-client-side-apply", deployment(stratRollingFull))
	for _, force := range []bool{true, false} {
		fmt.Printf("\n--- A, force=%v (from the setup state)\n", force)
		rec(fmt.Sprintf("A  omit rollingUpdate, force=%v", force), a.clone().Apply("kustomize-controller", deployment(stratRecreate), force))
	}

	// ---- B: same, with explicit rollingUpdate: null
	section("SCENARIO B: as A, but the apply config says rollingUpdate: null")
	bsrv := newServer()
	bsrv.Update("kubectl-client-side-apply", deployment(stratRollingFull))
	for _, force := range []bool{true, false} {
		fmt.Printf("\n--- B, force=%v (from the setup state)\n", force)
		rec(fmt.Sprintf("B  rollingUpdate: null, force=%v", force), bsrv.clone().Apply("kustomize-controller", deployment(stratRecreateNul), force))
	}
	fmt.Println("\n--- B extra: rollingUpdate: {} force=true")
	rec("B+ rollingUpdate: {}, force=true", bsrv.clone().Apply("kustomize-controller", deployment(stratRecreateEmp), true))
	fmt.Println("\n--- A/B extra: a non-apply Update (e.g. JSON merge patch rollingUpdate:null, or SMP $retainKeys) drops the block first, then Apply")
	fix := bsrv.clone()
	fix.Update("kubectl-patch", deployment(stratRecreate))
	rec("A+ after Update dropping block, Apply omit force=false", fix.Apply("kustomize-controller", deployment(stratRecreate), false))

	// ---- C: created by Apply without rollingUpdate; apiserver defaults it (unowned)
	section("SCENARIO C: created by Apply {type: RollingUpdate} (kustomize-controller); apiserver defaults rollingUpdate after SMD -> unowned")
	c := newServer()
	rec("C0 create-by-apply {type: RollingUpdate}", c.Apply("kustomize-controller", deployment(stratRollingBare), false))
	for _, v := range []struct{ label, strat string }{
		{"omit rollingUpdate", stratRecreate},
		{"rollingUpdate: null", stratRecreateNul},
		{"rollingUpdate: {}", stratRecreateEmp},
	} {
		for _, force := range []bool{false, true} {
			fmt.Printf("\n--- C, %s, force=%v (from the setup state)\n", v.label, force)
			rec(fmt.Sprintf("C  %s, force=%v", v.label, force), c.clone().Apply("kustomize-controller", deployment(v.strat), force))
		}
	}

	// ---- D: created by Apply that included rollingUpdate
	section("SCENARIO D: created by Apply incl. rollingUpdate {maxSurge: 1, maxUnavailable: 0}; re-apply Recreate")
	d := newServer()
	rec("D0 create-by-apply with rollingUpdate{1,0}", d.Apply("kustomize-controller", deployment(stratRollingD), false))
	for _, v := range []struct{ label, strat string }{
		{"omit rollingUpdate", stratRecreate},
		{"rollingUpdate: null", stratRecreateNul},
	} {
		fmt.Printf("\n--- D, %s (from the setup state)\n", v.label)
		rec(fmt.Sprintf("D  %s, force=false", v.label), d.clone().Apply("kustomize-controller", deployment(v.strat), false))
	}

	// ---- E: as A but the second step is an Apply by "helm" (Helm 4)
	section("SCENARIO E: created by Update (kubectl-client-side-apply), then Apply {type: Recreate} by helm (Helm 4 SSA)")
	e := newServer()
	e.Update("kubectl-client-side-apply", deployment(stratRollingFull))
	for _, force := range []bool{false, true} {
		fmt.Printf("\n--- E, force=%v (from the setup state)\n", force)
		rec(fmt.Sprintf("E  helm apply omit, force=%v", force), e.clone().Apply("helm", deployment(stratRecreate), force))
	}
	fmt.Println("\n--- E extra: created by Helm 3 (Update manager \"helm\"), upgraded by Helm 4 (Apply manager \"helm\")")
	e2 := newServer()
	e2.Update("helm", deployment(stratRollingFull))
	for _, force := range []bool{false, true} {
		rec(fmt.Sprintf("E+ helm3-created, helm4 apply omit, force=%v", force), e2.clone().Apply("helm", deployment(stratRecreate), force))
	}

	// ---- F: Flux-specific sequence (dry-run, then managedFields takeover, then apply)
	section("SCENARIO F: CSA-created object reconciled by Flux kustomize-controller (dry-run -> managedFields takeover -> apply, all force)")
	f := newServer()
	f.Update("kubectl-client-side-apply", deployment(stratRollingFull))
	fmt.Println("\n--- F1: manifest switches straight to Recreate")
	rec("F1 Flux, CSA-created, manifest {type: Recreate}", f.clone().fluxApply(deployment(stratRecreate)))
	fmt.Println("\n--- F2: Flux adopted the object earlier while the manifest still said {type: RollingUpdate} (no rollingUpdate)")
	f2 := f.clone()
	rec("F2a Flux adoption, manifest {type: RollingUpdate}", f2.fluxApply(deployment(stratRollingBare)))
	rec("F2b then manifest {type: Recreate}", f2.fluxApply(deployment(stratRecreate)))
	fmt.Println("\n--- F3: Flux adopted the object earlier with a manifest that spelled out rollingUpdate 25%/25%")
	f3 := f.clone()
	rec("F3a Flux adoption, manifest with rollingUpdate 25%/25%", f3.fluxApply(deployment(stratRollingFull)))
	rec("F3b then manifest {type: Recreate}", f3.fluxApply(deployment(stratRecreate)))

	section("SUMMARY")
	for _, r := range results {
		fmt.Printf("%-58s %s\n", r.name, r.outcome)
	}
}
