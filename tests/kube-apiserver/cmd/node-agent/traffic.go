// Requests that users make, for the real mode (--traffic): several
// clients, each at its own pace, in turn a create of a ResourceGroup and
// an update of one (the mutating and validating webhooks, and a conversion
// to the storage version), and a read of one at the served version
// v1api20200601, which is not the storage version (the conversion
// webhook). The failures worth counting come in short windows (a pod's
// stop racing its endpoint's removal, the CA bundle after a CRD write), so
// for burstFor after each pod's deletion and each CRD write the clients
// speed up to one request per burstEvery each. Each request is written as
// a "request" event, failed or not, with the API server's error and its
// cause; the harness counts the failures in the upgrade's window. Every
// object carries serviceoperator.azure.com/reconcile-policy: skip, so the
// controller never reaches for Azure (and no pod could: netns.go).
package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

var resourceGroups = schema.GroupVersionResource{Group: "resources.azure.com", Version: "v1api20200601", Resource: "resourcegroups"}

const (
	// maxObjects bounds the objects each client creates; then it updates.
	maxObjects = 30
	// clients is how many users make requests at once.
	users = 4
	// burstEvery is each client's interval in a burst: 40 requests a
	// second in all, so a 250 ms window sees about ten.
	burstEvery = 100 * time.Millisecond
	// burstFor is how long a burst lasts after what started it: above
	// the proxy's endpoint lag (1 s) and a CRD write's CA window.
	burstFor = 3 * time.Second
)

// burstUntil is when the current burst ends (Unix ms); the agent's event
// log starts one at each pod deletion and each CRD write it sees.
var burstUntil atomic.Int64

// startBurst is called for each event the agent writes.
func startBurst(fields map[string]any) {
	if fields["event"] == "crds" || (fields["event"] == "pod" && fields["step"] == "terminating") {
		burstUntil.Store(time.Now().Add(burstFor).UnixMilli())
	}
}

func traffic(ctx context.Context, dyn dynamic.Interface, namespace string, every time.Duration, log *eventLog) {
	for c := 0; c < users; c++ {
		go client(ctx, dyn.Resource(resourceGroups).Namespace(namespace), c, every, log)
	}
}

// client is one user: its own objects, a request each `every` (each
// client starting a fraction of it later, so that they interleave), one
// each burstEvery in a burst.
func client(ctx context.Context, rgs dynamic.ResourceInterface, id int, every time.Duration, log *eventLog) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(every * time.Duration(id) / users):
	}
	created := 0
	n := 0
	paced(ctx, every, burstEvery, func() {
		op := []string{"create", "update", "read"}[n%3]
		if op == "create" && created >= maxObjects {
			op = "update"
		}
		if op != "create" && created == 0 {
			op = "create"
		}
		var err error
		rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		name := func(i int) string { return fmt.Sprintf("traffic-%d-%d", id, i) }
		switch op {
		case "create":
			o := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": resourceGroups.GroupVersion().String(), "kind": "ResourceGroup",
				"metadata": map[string]any{
					"name":        name(created),
					"annotations": map[string]any{"serviceoperator.azure.com/reconcile-policy": "skip"},
				},
				"spec": map[string]any{"location": "westus"},
			}}
			if _, err = rgs.Create(rctx, o, metav1.CreateOptions{}); err == nil {
				created++
			}
		case "update":
			patch := fmt.Sprintf(`{"metadata":{"labels":{"asogen-traffic":"%d"}}}`, n)
			_, err = rgs.Patch(rctx, name(n%created), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		case "read":
			_, err = rgs.Get(rctx, name(n%created), metav1.GetOptions{})
		}
		cancel()
		n++
		if ctx.Err() != nil {
			return
		}
		event := map[string]any{"event": "request", "op": op, "ok": err == nil, "client": id}
		if err != nil {
			event["error"] = err.Error()
			event["through"] = through(err.Error())
			event["cause"] = cause(err.Error())
		}
		log.write(event)
	})
}

// paced calls act once each `every`, and once each `fast` while a burst
// lasts, until ctx ends: the one pace of the users and of the probe.
func paced(ctx context.Context, every, fast time.Duration, act func()) {
	last := time.Time{}
	tick := time.NewTicker(fast)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if time.Since(last) < every && time.Now().UnixMilli() > burstUntil.Load() {
			continue
		}
		last = time.Now()
		act()
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

// cause names why a request failed, from the API server's error text
// (docs/rollout-harness.md, "Failed requests by cause"):
//   - unknown-version: the webhook pod does not know a version the request
//     needs (an older release's pod asked about the newer storage version);
//   - ca-bundle: the TLS handshake failed on the CA (the CRD's or the
//     webhook configuration's CA bundle missing or stale);
//   - pod-stopping: the connection to the pod was refused or reset, or it
//     closed mid-request (a pod that stops serving: EOF, or Go's "use of
//     closed network connection" for a request that shared the closed
//     connection);
//   - no-endpoint: the Service had no endpoint to route to;
//   - other: anything else, kept with its text.
func cause(message string) string {
	switch {
	case strings.Contains(message, "is registered for version"):
		return "unknown-version"
	case strings.Contains(message, "x509:"), strings.Contains(message, "failed to verify certificate"):
		return "ca-bundle"
	case strings.Contains(message, "has no ready endpoint"), strings.Contains(message, "no endpoints available"):
		return "no-endpoint"
	case strings.Contains(message, "connection refused"), strings.Contains(message, "connection reset"),
		strings.Contains(message, "no sandbox runs at"), strings.Contains(message, "ns/net"),
		strings.Contains(message, "EOF"), strings.Contains(message, "broken pipe"),
		strings.Contains(message, "use of closed network connection"):
		return "pod-stopping"
	}
	return "other"
}

// probe is a client of the webhook Service that opens a new connection
// each time (--probe-socket): an HTTP CONNECT to the Service's cluster IP
// through the cluster proxy, as the API server dials a webhook, closed at
// once. The API server keeps its connections to a webhook pod open and
// dials anew only when one closes, so its users meet a pod's stop only
// when a redial falls in the window; a probe sees the window itself:
// every new connection that the Service's endpoints (as the proxy last
// synced them) would refuse. Each is a "probe" event with the cause.
func probe(ctx context.Context, client kubernetes.Interface, namespace, service, socket string, every time.Duration, log *eventLog) {
	paced(ctx, every, probeBurstEvery, func() {
		svc, err := client.CoreV1().Services(namespace).Get(ctx, service, metav1.GetOptions{})
		if err != nil || svc.Spec.ClusterIP == "" || len(svc.Spec.Ports) == 0 {
			return // not installed yet
		}
		target := net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port)))
		err = dialThroughProxy(socket, target)
		if ctx.Err() != nil {
			return
		}
		event := map[string]any{"event": "probe", "ok": err == nil}
		if err != nil {
			event["error"] = err.Error()
			event["cause"] = cause(err.Error())
		}
		log.write(event)
	})
}

// probeBurstEvery is the probe's interval in a burst: a 1 s window of the
// proxy's endpoint lag sees about a hundred.
const probeBurstEvery = 10 * time.Millisecond

// dialThroughProxy asks the cluster proxy on socket for a connection to
// target, as the API server's egress does; nil when it was established.
func dialThroughProxy(socket, target string) error {
	conn, err := net.DialTimeout("unix", socket, 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		return err
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("proxy: %s", res.Status)
	}
	return nil
}
