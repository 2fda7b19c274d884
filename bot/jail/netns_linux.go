package jail

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fdEgress is the init's path descriptor (O_PATH) of the egress proxy's unix socket: the init
// connects through /proc/self/fd/<fdEgress> after pivot_root, when the host's path is gone, and
// nothing else in the call holds it (close-on-exec; /proc/1/fd is root's alone).
const fdEgress = 7

// egressSpec is what the init of a call with a network namespace is told.
type egressSpec struct {
	// Forward are loopback address:port pairs the init listens on besides EgressAddr, each
	// connection a tunnel to the same address outside (the proxy decides).
	Forward []string `json:"forward,omitempty"`
}

// egressOrigin is the line the init writes first on each connection to the egress proxy (the
// proxy's package reads the same fields: bot/egress.Origin).
type egressOrigin struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	Target  string `json:"target,omitempty"`
}

// maxOriginCommand bounds the command line named in an origin line.
const maxOriginCommand = 1024

// startNetwork brings the call's loopback up and starts the init's listeners; each accepted
// connection is handed to the egress proxy. It runs in the init, inside the new network
// namespace and after the new /proc is mounted (the origin of a connection is read there).
func startNetwork(spec *egressSpec) error {
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("bring the call's loopback up: %w", err)
	}
	listen := func(addr, target string) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		go acceptEgress(ln, target)
		return nil
	}
	if err := listen(EgressAddr, ""); err != nil {
		return fmt.Errorf("listen for the egress proxy: %w", err)
	}
	// IPv6 loopback where the kernel has it: a client that tries ::1 first finds the proxy too.
	_ = listen(net.JoinHostPort("::1", strconv.Itoa(EgressPort)), "")
	for _, f := range spec.Forward {
		if err := listen(f, f); err != nil {
			return fmt.Errorf("listen for %s: %w", f, err)
		}
	}
	return nil
}

// loopbackUp sets IFF_UP on lo: a new network namespace has it down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

func acceptEgress(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go relayEgress(c, target)
	}
}

// relayEgress connects to the egress proxy, names who opened c and copies both ways.
func relayEgress(c net.Conn, target string) {
	defer c.Close()
	o := egressOrigin{Target: target}
	if peer, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		if local, err := netip.ParseAddrPort(c.LocalAddr().String()); err == nil {
			o.PID, o.Command = originOf(peer, local)
		}
	}
	up, err := net.Dial("unix", "/proc/self/fd/"+strconv.Itoa(fdEgress))
	if err != nil {
		return
	}
	defer up.Close()
	line, _ := json.Marshal(o)
	if _, err := up.Write(append(line, '\n')); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(up, c)
	go cp(c, up)
	<-done
	<-done
}

// originOf finds the process of the call that owns the socket peer -> local: its inode from
// /proc/net/tcp{,6}, then the process holding it among /proc/<pid>/fd. Read in the call's own
// proc, so only the call's processes are searched.
func originOf(peer, local netip.AddrPort) (int, string) {
	inode := socketInode(peer, local)
	if inode == "" {
		return 0, ""
	}
	want := "socket:[" + inode + "]"
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == 1 {
			continue
		}
		fds, _ := os.ReadDir("/proc/" + p.Name() + "/fd")
		for _, fd := range fds {
			if l, _ := os.Readlink("/proc/" + p.Name() + "/fd/" + fd.Name()); l == want {
				return pid, commandLine(pid)
			}
		}
	}
	return 0, ""
}

// commandLine is /proc/<pid>/cmdline with its arguments joined by spaces, bounded.
func commandLine(pid int) string {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxOriginCommand))
	return strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
}

// socketInode reads the inode of the TCP socket whose local end is peer and remote end local.
func socketInode(peer, local netip.AddrPort) string {
	file := "/proc/net/tcp"
	if peer.Addr().Is6() && !peer.Addr().Is4In6() {
		file = "/proc/net/tcp6"
	}
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	wantLocal, wantRemote := procNetAddr(peer), procNetAddr(local)
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 9 && fields[1] == wantLocal && fields[2] == wantRemote {
			return fields[9]
		}
	}
	return ""
}

// procNetAddr writes an address as /proc/net/tcp does: the address's 32-bit words in host (little
// endian) byte order, in hex, then the port.
func procNetAddr(ap netip.AddrPort) string {
	a := ap.Addr().Unmap()
	b := a.AsSlice()
	for i := 0; i+4 <= len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return strings.ToUpper(hex.EncodeToString(b)) + fmt.Sprintf(":%04X", ap.Port())
}

// openEgress opens the egress proxy's socket as a path descriptor for the init, refusing anything
// but a socket (the folder is the studio's, but a wrong path must fail here, not in the call).
func openEgress(socket string) (*os.File, error) {
	fd, err := unix.Open(socket, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the egress proxy's socket: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		unix.Close(fd)
		return nil, fmt.Errorf("the egress proxy's socket %s is not a socket", socket)
	}
	return os.NewFile(uintptr(fd), "egress"), nil
}
