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
}

func runProxy(ctx context.Context, client kubernetes.Interface, socket, sandboxes string, log *eventLog) error {
	f := informers.NewSharedInformerFactory(client, 0)
	p := &clusterProxy{
		sandboxes: sandboxes,
		services:  f.Core().V1().Services().Informer(),
		slices:    f.Discovery().V1().EndpointSlices().Informer(),
		log:       log,
	}
	err := p.services.AddIndexers(cache.Indexers{"clusterIP": func(o any) ([]string, error) {
		return []string{o.(*corev1.Service).Spec.ClusterIP}, nil
	}})
	if err != nil {
		return err
	}
	err = p.slices.AddIndexers(cache.Indexers{"service": func(o any) ([]string, error) {
		es := o.(*discoveryv1.EndpointSlice)
		return []string{es.Namespace + "/" + es.Labels[discoveryv1.LabelServiceName]}, nil
	}})
	if err != nil {
		return err
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
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
		fmt.Fprintf(conn, "HTTP/1.1 503 Service Unavailable\r\n\r\n%s", err)
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
	slices, _ := p.slices.GetIndexer().ByIndex("service", svc.Namespace+"/"+svc.Name)
	for _, o := range slices {
		es := o.(*discoveryv1.EndpointSlice)
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
	return dialIn(pid, net.JoinHostPort(t.ip, t.port))
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
