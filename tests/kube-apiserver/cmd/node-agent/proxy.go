// The cluster network for the real mode, as the API server reaches pods:
// `node-agent proxy` serves the API server's egress selector (its
// "cluster" egress, an HTTP CONNECT proxy on a Unix socket) and plays
// kube-proxy. The API server calls a webhook (admission or CRD
// conversion) at its Service's cluster IP; this finds the Service, picks
// one of its ready endpoints at random (the serving, terminating ones when
// none is ready, as kube-proxy does since 1.28), and connects to that pod's
// address from inside the pod's network namespace (netns.go). The pods'
// sandboxes are found in a folder every agent writes: one file per pod
// address, holding the pid of the process in that pod's namespace.
//
// Like kube-proxy, it routes by the endpoints it last programmed, not by
// the API server's latest: each EndpointSlice change reaches its routing
// --lag later (1 s: kube-proxy's default --iptables-min-sync-period, the
// delay a change meets when it follows another within the period, as the
// old pod's deletion follows the new pod's readiness in a rollout). So a
// deleted pod is still routed to for that long: the window a preStop
// delay covers.
//
// Nothing reaches the network: a Service with no endpoint, or an endpoint
// whose pod has no sandbox here, is refused (503), as a connection to a
// Service without endpoints is.
package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

type clusterProxy struct {
	sandboxes string
	services  cache.SharedIndexInformer
	slices    cache.SharedIndexInformer
	log       *eventLog
	lag       time.Duration

	mu     sync.Mutex
	view   map[string][]*discoveryv1.EndpointSlice // by "namespace/service", as programmed
	viewAt int64                                   // the sequence number of the snapshot programmed
	taken  int64                                   // snapshots taken so far
}

func runProxy(ctx context.Context, client kubernetes.Interface, socket, sandboxes string, lag time.Duration, log *eventLog) error {
	f := informers.NewSharedInformerFactory(client, 0)
	p := &clusterProxy{
		sandboxes: sandboxes,
		services:  f.Core().V1().Services().Informer(),
		slices:    f.Discovery().V1().EndpointSlices().Informer(),
		log:       log,
		lag:       lag,
		view:      map[string][]*discoveryv1.EndpointSlice{},
	}
	notify := func(any) { p.changed() }
	if _, err := p.slices.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, o any) { notify(o) },
		DeleteFunc: notify,
	}); err != nil {
		return err
	}
	err := p.services.AddIndexers(cache.Indexers{"clusterIP": func(o any) ([]string, error) {
		return []string{o.(*corev1.Service).Spec.ClusterIP}, nil
	}})
	if err != nil {
		return err
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	p.program(p.snapshot())
	_ = os.Remove(socket)
	l, err := net.Listen("unix", socket)
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); l.Close() }()
	log.write(map[string]any{"event": "started", "socket": socket})
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go p.serve(conn)
	}
}

// changed takes a snapshot of the EndpointSlices now and programs it lag
// later.
func (p *clusterProxy) changed() {
	snap := p.snapshot()
	time.AfterFunc(p.lag, func() { p.program(snap) })
}

type endpointSnapshot struct {
	seq  int64
	view map[string][]*discoveryv1.EndpointSlice
}

// snapshot is the EndpointSlices the informer holds now, by Service.
func (p *clusterProxy) snapshot() endpointSnapshot {
	view := map[string][]*discoveryv1.EndpointSlice{}
	for _, o := range p.slices.GetStore().List() {
		es := o.(*discoveryv1.EndpointSlice)
		key := es.Namespace + "/" + es.Labels[discoveryv1.LabelServiceName]
		view[key] = append(view[key], es)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.taken++
	return endpointSnapshot{seq: p.taken, view: view}
}

// program routes by snap from now on, unless a later one is programmed.
func (p *clusterProxy) program(snap endpointSnapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if snap.seq > p.viewAt {
		p.view, p.viewAt = snap.view, snap.seq
	}
}

// serve answers one CONNECT and splices the connection to the pod.
func (p *clusterProxy) serve(conn net.Conn) {
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		conn.Close()
		return
	}
	pod, err := p.dial(req.Host)
	if err != nil {
		p.log.write(map[string]any{"event": "proxy", "target": req.Host, "error": err.Error()})
		// the reason phrase carries why, so that the API server's error
		// (which quotes the status line) says it: no endpoint, or the pod
		// that refused the connection
		reason := strings.Map(func(r rune) rune {
			if r < ' ' || r > '~' {
				return ' '
			}
			return r
		}, err.Error())
		fmt.Fprintf(conn, "HTTP/1.1 503 %s\r\n\r\n%s", reason, err)
		conn.Close()
		return
	}
	if _, err := fmt.Fprintf(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		pod.Close()
		return
	}
	splice(&bufferedConn{Conn: conn, r: br}, pod)
}

// dial connects to hostPort, a Service's cluster IP and port, as
// kube-proxy would route it.
func (p *clusterProxy) dial(hostPort string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(portText)
	objs, _ := p.services.GetIndexer().ByIndex("clusterIP", host)
	if len(objs) != 1 {
		return nil, fmt.Errorf("no Service has the cluster IP %s", host)
	}
	svc := objs[0].(*corev1.Service)
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if int(svc.Spec.Ports[i].Port) == port {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		return nil, fmt.Errorf("Service %s/%s has no port %d", svc.Namespace, svc.Name, port)
	}
	type target struct{ ip, port string }
	var ready, serving []target
	p.mu.Lock()
	slices := p.view[svc.Namespace+"/"+svc.Name]
	p.mu.Unlock()
	for _, es := range slices {
		var targetPort int32
		for _, ep := range es.Ports {
			if ep.Name != nil && *ep.Name == sp.Name && ep.Port != nil {
				targetPort = *ep.Port
			}
		}
		if targetPort == 0 {
			continue
		}
		for _, e := range es.Endpoints {
			t := target{e.Addresses[0], strconv.Itoa(int(targetPort))}
			c := e.Conditions
			switch {
			case c.Ready != nil && *c.Ready:
				ready = append(ready, t)
			case c.Serving != nil && *c.Serving && c.Terminating != nil && *c.Terminating:
				serving = append(serving, t)
			}
		}
	}
	pool := ready
	if len(pool) == 0 {
		pool = serving
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("Service %s/%s has no ready endpoint", svc.Namespace, svc.Name)
	}
	t := pool[rand.Intn(len(pool))]
	pid, err := p.sandboxOf(t.ip)
	if err != nil {
		return nil, err
	}
	conn, err := dialIn(pid, net.JoinHostPort(t.ip, t.port))
	if err != nil && !strings.Contains(err.Error(), t.ip) {
		// name the pod reached, so that a failure can be tied to it
		return nil, fmt.Errorf("pod %s: %w", t.ip, err)
	}
	return conn, err
}

// sandboxOf reads the pid of the process in the namespace of the pod at ip.
func (p *clusterProxy) sandboxOf(ip string) (int, error) {
	data, err := os.ReadFile(filepath.Join(p.sandboxes, ip))
	if err != nil {
		return 0, fmt.Errorf("no sandbox runs at %s", ip)
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// bufferedConn reads what the CONNECT's reader buffered before the rest.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }
