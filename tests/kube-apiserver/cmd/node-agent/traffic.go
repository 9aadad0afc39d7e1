// Requests that users make, for the real mode (--traffic): at a fixed
// interval, in turn, a create of a ResourceGroup and an update of one (the
// mutating and validating webhooks, and a conversion to the storage
// version), and a read of one at the served version v1api20200601, which
// is not the storage version (the conversion webhook). Each is written as
// a "request" event, failed or not, with the API server's error; the
// harness counts the failures in the upgrade's window. Every object
// carries serviceoperator.azure.com/reconcile-policy: skip, so the
// controller never reaches for Azure (and no pod could: netns.go).
package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

var resourceGroups = schema.GroupVersionResource{Group: "resources.azure.com", Version: "v1api20200601", Resource: "resourcegroups"}

// maxObjects bounds the objects the client creates; then it updates.
const maxObjects = 60

func traffic(ctx context.Context, dyn dynamic.Interface, namespace string, every time.Duration, log *eventLog) {
	rgs := dyn.Resource(resourceGroups).Namespace(namespace)
	created := 0
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		op := []string{"create", "update", "read"}[n%3]
		if op == "create" && created >= maxObjects {
			op = "update"
		}
		if op != "create" && created == 0 {
			op = "create"
		}
		var err error
		rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		switch op {
		case "create":
			o := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": resourceGroups.GroupVersion().String(), "kind": "ResourceGroup",
				"metadata": map[string]any{
					"name":        fmt.Sprintf("traffic-%d", created),
					"annotations": map[string]any{"serviceoperator.azure.com/reconcile-policy": "skip"},
				},
				"spec": map[string]any{"location": "westus"},
			}}
			if _, err = rgs.Create(rctx, o, metav1.CreateOptions{}); err == nil {
				created++
			}
		case "update":
			patch := fmt.Sprintf(`{"metadata":{"labels":{"asogen-traffic":"%d"}}}`, n)
			_, err = rgs.Patch(rctx, fmt.Sprintf("traffic-%d", n%created), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		case "read":
			_, err = rgs.Get(rctx, fmt.Sprintf("traffic-%d", n%created), metav1.GetOptions{})
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		event := map[string]any{"event": "request", "op": op, "ok": err == nil}
		if err != nil {
			event["error"] = err.Error()
			event["through"] = through(err.Error())
		}
		log.write(event)
	}
}

// through names what failed: the conversion webhook, an admission
// webhook, or something else (the API server's own error).
func through(message string) string {
	switch {
	case strings.Contains(message, "conversion webhook"):
		return "conversion"
	case strings.Contains(message, "failed calling webhook"), strings.Contains(message, "admission webhook"):
		return "admission"
	}
	return "other"
}
