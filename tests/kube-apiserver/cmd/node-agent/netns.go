// Pod sandboxes for the real mode (real.go): each container runs as a real
// process in network, mount, UTS, PID, IPC and cgroup namespaces of its
// own, chrooted into a folder that holds what its image and volumes would
// (the manager, the image's crds/, the service-account files, the mounted
// Secrets), with every capability dropped and no way to gain one back
// (no_new_privs): it can neither see nor signal a process outside its pod,
// nor leave its root (chroot again needs CAP_SYS_CHROOT), nor mount. The
// pod's first process (runPod) holds the manager as its only child, and
// ends, taking every process of the pod with it, when the manager ends or
// the agent is gone.
//
// The network namespace has a loopback interface only, holding two /32
// addresses: the pod's own (what the EndpointSlices publish; the webhook
// and health servers bind it) and the API server's Service address
// 10.0.0.1 (the kubernetes Service, as in-cluster clients reach it), where
// the agent listens from inside the namespace and forwards to the test
// API server. There is no other interface and no route, so the process
// can reach nothing but what the agent opens for it; every connection
// into the pod (probes, webhook calls through proxy.go) is dialled by the
// agent from inside the namespace too.
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// apiServiceIP is the kubernetes Service's address in the test API
// server's --service-cluster-ip-range (its serving certificate names it).
const apiServiceIP = "10.0.0.1"

// dialTimeout bounds every connection the agent opens into a pod.
const dialTimeout = 2 * time.Second

// sandboxMain is the child side, run as `node-agent sandbox ROOT IP
// HOSTNAME IPTOOL PROGRAM [ARGS...]` in new network, mount and UTS
// namespaces, with the container's environment: it sets the network up
// with IPTOOL (iproute2's ip, found by the agent: the container's PATH is
// not the host's), tells the agent on fd 3, waits for "go" on fd 4, then
// chroots into ROOT and executes PROGRAM (bind-mounted at ROOT/manager).
func sandboxMain(args []string) {
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "sandbox: "+format+"\n", a...)
		os.Exit(127)
	}
	if len(args) < 5 {
		fail("usage: sandbox ROOT IP HOSTNAME IPTOOL PROGRAM [ARGS...]")
	}
	root, ip, hostname, ipTool, program := args[0], args[1], args[2], args[3], args[4]
	for _, step := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", ip + "/32", "dev", "lo"},
		{"addr", "add", apiServiceIP + "/32", "dev", "lo"},
	} {
		if out, err := exec.Command(ipTool, step...).CombinedOutput(); err != nil {
			fail("ip %s: %v: %s", strings.Join(step, " "), err, out)
		}
	}
	if err := syscall.Sethostname([]byte(hostname)); err != nil {
		fail("hostname: %v", err)
	}
	ready, wait := os.NewFile(3, "ready"), os.NewFile(4, "go")
	if _, err := ready.Write([]byte("net\n")); err != nil {
		fail("tell the agent: %v", err)
	}
	ready.Close()
	agent := bufio.NewReader(wait)
	line, _ := agent.ReadString('\n')
	if line != "go\n" {
		os.Exit(1) // the agent gave up on this start
	}
	lastCap := lastCapability()
	// mounts made here stay in this namespace
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		fail("make mounts private: %v", err)
	}
	if err := syscall.Mount(program, filepath.Join(root, "manager"), "", syscall.MS_BIND, ""); err != nil {
		fail("mount the manager: %v", err)
	}
	if err := syscall.Chroot(root); err != nil {
		fail("chroot: %v", err)
	}
	if err := syscall.Chdir("/"); err != nil {
		fail("chdir: %v", err)
	}
	if err := dropCapabilities(lastCap); err != nil {
		fail("drop capabilities: %v", err)
	}
	os.Exit(runPod(agent, args[5:]))
}

// runPod runs the manager as the pod's only other process and returns its
// exit code (128 + the signal's number when a signal ended it, as the
// kubelet reports it). This process is the pod's PID namespace's first, so
// when it ends, the kernel ends every process of the pod: it ends when the
// manager does, and when the agent's end of the "go" pipe closes, which
// the kernel does when the agent dies, however it dies. A signal the agent
// sends (SIGTERM at a pod's stop) is passed on to the manager.
func runPod(agent *bufio.Reader, args []string) int {
	manager := exec.Command("/manager", args...)
	// this process's own descriptors: the root has no /dev/null to open
	manager.Stdin, manager.Stdout, manager.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := manager.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: start the manager: %v\n", err)
		return 127
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for sig := range signals {
			_ = manager.Process.Signal(sig)
		}
	}()
	go func() {
		_, _ = io.Copy(io.Discard, agent)
		os.Exit(137) // the agent is gone: so is the pod
	}()
	_ = manager.Wait()
	status, _ := manager.ProcessState.Sys().(syscall.WaitStatus)
	if status.Signaled() {
		return 128 + int(status.Signal())
	}
	return status.ExitStatus()
}

// Linux's prctl options and capability ABI (linux/prctl.h,
// linux/capability.h), which the syscall package does not name.
const (
	prCapbsetDrop        = 24
	prSetNoNewPrivs      = 38
	prCapAmbient         = 47
	prCapAmbientClearAll = 4
	capabilityVersion3   = 0x20080522
)

// lastCapability is the kernel's highest capability number (read before
// the chroot: the pod's root has no /proc).
func lastCapability() int {
	last := 40 // CAP_CHECKPOINT_RESTORE, the last in Linux 6.x
	if text, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		_, _ = fmt.Sscanf(strings.TrimSpace(string(text)), "%d", &last)
	}
	return last
}

// dropCapabilities leaves the process, and what it executes, no
// capability: the bounding and ambient sets emptied, the effective,
// permitted and inheritable sets cleared, and no_new_privs set, so that
// executing the manager as uid 0 gives it none back. What the manager
// does needs none: it listens on ports above 1024 and reads files its
// uid owns.
func dropCapabilities(last int) error {
	// prctl and capset act on the calling thread only, and the Go runtime
	// runs this process on several: each call is made on every thread, so
	// that the process as /proc shows it, and whatever thread forks the
	// manager, holds none (AllThreadsSyscall needs cgo off: the build sets
	// CGO_ENABLED=0).
	for c := 0; c <= last; c++ {
		if _, _, errno := syscall.AllThreadsSyscall6(syscall.SYS_PRCTL, prCapbsetDrop, uintptr(c), 0, 0, 0, 0); errno != 0 && errno != syscall.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, errno)
		}
	}
	if _, _, errno := syscall.AllThreadsSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("clear the ambient set: %w", errno)
	}
	if _, _, errno := syscall.AllThreadsSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("set no_new_privs: %w", errno)
	}
	header := struct {
		version uint32
		pid     int32
	}{capabilityVersion3, 0}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, errno := syscall.AllThreadsSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&header)), uintptr(unsafe.Pointer(&data[0])), 0); errno != 0 {
		return fmt.Errorf("capset: %w", errno)
	}
	return nil
}

// sandbox is a started container process.
type sandbox struct {
	cmd  *exec.Cmd
	goFD *os.File
	done chan struct{} // closed when the process exited
	exit int           // its exit code, once done
}

// startSandbox starts `program args` for a pod at ip, chrooted into root,
// with env; onNet runs once its network is up (with the process's pid),
// before the program starts. The process's output goes to log.
func startSandbox(self, ipTool, root, ip, hostname, program string, args, env []string, log io.Writer, onNet func(pid int) error) (*sandbox, error) {
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		readyR.Close()
		readyW.Close()
		return nil, err
	}
	cmd := exec.Command(self, append([]string{"sandbox", root, ip, hostname, ipTool, program}, args...)...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = []*os.File{readyW, goR}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS |
			syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWCGROUP,
		Setpgid:   true,
		Pdeathsig: syscall.SIGKILL, // never outlive the agent
	}
	err = cmd.Start()
	readyW.Close()
	goR.Close()
	if err != nil {
		readyR.Close()
		goW.Close()
		return nil, err
	}
	s := &sandbox{cmd: cmd, goFD: goW, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		s.exit = cmd.ProcessState.ExitCode()
		close(s.done)
	}()
	line, _ := bufio.NewReader(readyR).ReadString('\n')
	readyR.Close()
	if line != "net\n" {
		goW.Close()
		<-s.done
		return nil, fmt.Errorf("the sandbox did not set its network up (exit %d)", s.exit)
	}
	if err := onNet(cmd.Process.Pid); err != nil {
		goW.Close()
		s.kill()
		return nil, err
	}
	// the pipe stays open for the pod's life: its end is how the pod
	// learns the agent is gone (runPod)
	if _, err = goW.Write([]byte("go\n")); err != nil {
		s.kill()
		return nil, err
	}
	go func() {
		<-s.done
		goW.Close()
	}()
	return s, nil
}

func (s *sandbox) signal(sig syscall.Signal) {
	_ = s.cmd.Process.Signal(sig)
}

func (s *sandbox) kill() {
	s.signal(syscall.SIGKILL)
	<-s.done
}

// inNetns runs f on a thread switched into the network namespace of pid;
// sockets f creates stay in that namespace.
func inNetns(pid int, f func() error) error {
	target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return err
	}
	defer target.Close()
	errc := make(chan error, 1)
	go func() {
		// the thread is never unlocked when switching back fails: it dies
		// with the goroutine instead of serving others in the wrong namespace
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- err
			return
		}
		defer own.Close()
		if err := setns(target); err != nil {
			errc <- err
			return
		}
		ferr := f()
		if err := setns(own); err != nil {
			errc <- fmt.Errorf("back to the agent's network namespace: %w", err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// setnsCall is setns(2)'s number, which package syscall does not name
// (golang.org/x/sys/unix does, but importing it would change go.mod and
// with it every component's build key).
var setnsCall = map[string]uintptr{"amd64": 308, "arm64": 268}[runtime.GOARCH]

func setns(ns *os.File) error {
	if setnsCall == 0 {
		return fmt.Errorf("setns: no syscall number for %s", runtime.GOARCH)
	}
	_, _, errno := syscall.RawSyscall(setnsCall, ns.Fd(), syscall.CLONE_NEWNET, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// dialIn connects to addr from inside the network namespace of pid.
func dialIn(pid int, addr string) (net.Conn, error) {
	var conn net.Conn
	err := inNetns(pid, func() error {
		var err error
		conn, err = net.DialTimeout("tcp", addr, dialTimeout)
		return err
	})
	return conn, err
}

// listenIn listens on addr inside the network namespace of pid.
func listenIn(pid int, addr string) (net.Listener, error) {
	var l net.Listener
	err := inNetns(pid, func() error {
		var err error
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// splice copies both ways between a and b until either side ends, then
// closes both (HTTP over TLS needs no half-close).
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(a, b); done <- struct{}{} }()
	go func() { _, _ = io.Copy(b, a); done <- struct{}{} }()
	<-done
	a.Close()
	b.Close()
}
