// Package egress decides where an agent's network traffic may go: the network mode of a run, the
// allow-list of hosts (a name, `*.domain`, `host:port`, an address for a self-hosted mirror), the
// decision on one request before anything is resolved, the check of the addresses a name resolved
// to, and the bounded record of what was blocked. It is pure: the egress proxy in bot/codex asks
// it and carries the answer out.
package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// Mode is how much of the network a run's agent reaches (the `network` input).
type Mode string

const (
	// AllowList: the model route and the hosts on the allow-list, nothing else (the default).
	AllowList Mode = "allow-list"
	// ModelOnly: the model route alone; no package registry, no other host.
	ModelOnly Mode = "model-only"
	// Open: any host, said out loud on the status comment like an unconfined agent.
	Open Mode = "open"
)

// DefaultMode is the mode of a run that names none.
const DefaultMode = AllowList

// ParseMode reads the `network` input or studio.json field; empty is DefaultMode.
func ParseMode(v string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(v))); m {
	case "":
		return DefaultMode, nil
	case AllowList, ModelOnly, Open:
		return m, nil
	}
	return "", fmt.Errorf("network %q must be allow-list, model-only or open", v)
}

// Rule is one allow-list entry.
type Rule struct {
	// Entry is the entry as it was written, for the reasons shown to people.
	Entry string
	// name is the lower-case host name; suffix marks `*.name` (any host below name, not name).
	name   string
	suffix bool
	// addr is set for an address entry (a mirror on loopback or a private network).
	addr netip.Addr
	// port is the one port the entry allows; 0 means the web ports, 443 and 80.
	port int
}

// webPorts are what an entry without a port allows: HTTPS, and HTTP for mirrors that serve it.
var webPorts = []int{443, 80}

// ParseRule reads one entry: `host`, `*.domain`, `host:port`, `*.domain:port`, an IPv4 address
// or a bracketed IPv6 one, each with an optional port.
func ParseRule(entry string) (Rule, error) {
	r := Rule{Entry: strings.TrimSpace(entry)}
	s := strings.ToLower(r.Entry)
	if s == "" {
		return r, errors.New("an allow-list entry is empty")
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@ \t") {
		return r, fmt.Errorf("allow-list entry %q: give a host (`example.com`, `*.example.com`, `example.com:8443`), not a URL", r.Entry)
	}
	host, port, err := splitPort(s)
	if err != nil {
		return r, fmt.Errorf("allow-list entry %q: %w", r.Entry, err)
	}
	r.port = port
	if a, ok := parseAddr(host); ok {
		r.addr = a
		return r, nil
	}
	if strings.HasPrefix(host, "*.") {
		r.suffix, host = true, host[2:]
	}
	if strings.Contains(host, "*") {
		return r, fmt.Errorf("allow-list entry %q: a wildcard may only stand as the first label (`*.example.com`); to reach every host, set `network: open`", r.Entry)
	}
	name, err := hostName(host)
	if err != nil {
		return r, fmt.Errorf("allow-list entry %q: %w", r.Entry, err)
	}
	if r.suffix && !strings.Contains(name, ".") {
		return r, fmt.Errorf("allow-list entry %q: `*.` needs a domain of at least two labels", r.Entry)
	}
	r.name = name
	return r, nil
}

// splitPort separates an optional `:port` (after a bracketed IPv6 address, or a name or IPv4).
func splitPort(s string) (host string, port int, err error) {
	host = s
	var p string
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return "", 0, errors.New("an IPv6 address lacks its closing `]`")
		}
		host, p = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		if rest := s[end+1:]; rest != "" && !strings.HasPrefix(rest, ":") {
			return "", 0, errors.New("only a port may follow an IPv6 address")
		}
	case strings.Count(s, ":") == 1:
		i := strings.LastIndex(s, ":")
		host, p = s[:i], s[i+1:]
	case strings.Count(s, ":") > 1:
		return "", 0, errors.New("write an IPv6 address in brackets: `[::1]:8080`")
	}
	if p == "" {
		if strings.HasSuffix(s, ":") {
			return "", 0, errors.New("the port is empty")
		}
		return host, 0, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return host, n, nil
}

// parseAddr reads an IP address in its one standard spelling; an IPv4 address inside IPv6
// (::ffff:127.0.0.1) is taken as the IPv4 one, so it cannot pass for another host.
func parseAddr(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// hostName checks a DNS name and returns it lower-case without a trailing dot. The last label
// must start with a letter: every top-level domain does, and names such as `2130706433`,
// `0x7f.1` or `127.1` are the other spellings of an address that resolvers accept (inet_aton),
// which must never pass for a name.
func hostName(host string) (string, error) {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "" {
		return "", errors.New("the host is empty")
	}
	if len(name) > 253 {
		return "", errors.New("the host name is longer than 253 characters")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", fmt.Errorf("%q is not a host name (a label is empty or longer than 63 characters)", host)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
			if !ok {
				return "", fmt.Errorf("%q is not a host name (write an international name in its xn-- form)", host)
			}
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("%q is not a host name (a label starts or ends with a hyphen)", host)
		}
	}
	if last := labels[len(labels)-1]; last[0] < 'a' || last[0] > 'z' {
		return "", fmt.Errorf("%q is not a host name: it reads as an address; write the address itself", host)
	}
	return name, nil
}

// String is the entry as the docs and the status comment show it.
func (r Rule) String() string { return r.Entry }

// allowsPort reports whether the rule lets port through.
func (r Rule) allowsPort(port int) bool {
	if r.port != 0 {
		return port == r.port
	}
	for _, p := range webPorts {
		if port == p {
			return true
		}
	}
	return false
}

// Address is the address and port (0: the web ports) an address entry names; ok is false for a
// name entry.
func (r Rule) Address() (a netip.Addr, port int, ok bool) {
	return r.addr, r.port, r.addr.IsValid()
}

// List is an allow-list: rules in the order they were given, each entry once.
type List struct {
	rules []Rule
}

// ParseList reads entries (blank ones are skipped); every bad entry is named in the error, and
// the good ones are kept.
func ParseList(entries []string) (List, error) {
	var l List
	var errs []error
	for _, e := range entries {
		if strings.TrimSpace(e) == "" {
			continue
		}
		r, err := ParseRule(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l = l.With(r)
	}
	return l, errors.Join(errs...)
}

// SplitEntries reads an input that lists entries separated by commas, spaces or new lines.
func SplitEntries(v string) []string {
	return strings.FieldsFunc(v, func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r' })
}

// With is l with r added, unless an entry of the same meaning is there already.
func (l List) With(rules ...Rule) List {
	out := List{rules: append([]Rule{}, l.rules...)}
	for _, r := range rules {
		dup := false
		for _, have := range out.rules {
			if have.name == r.name && have.suffix == r.suffix && have.addr == r.addr && have.port == r.port {
				dup = true
				break
			}
		}
		if !dup {
			out.rules = append(out.rules, r)
		}
	}
	return out
}

// Merge is l with every rule of o added.
func (l List) Merge(o List) List { return l.With(o.rules...) }

// Rules are the list's rules in order.
func (l List) Rules() []Rule { return append([]Rule{}, l.rules...) }

// Entries are the list's entries as written, in order.
func (l List) Entries() []string {
	out := make([]string, 0, len(l.rules))
	for _, r := range l.rules {
		out = append(out, r.Entry)
	}
	return out
}

// Len is the number of rules.
func (l List) Len() int { return len(l.rules) }

// Decision is the answer for one request.
type Decision struct {
	Allowed bool
	// Rule is the entry that allowed the request.
	Rule Rule
	// Reason says why the request was refused, in words for the status comment.
	Reason string
}

// Decide answers a request for host:port as the client named it (a CONNECT's authority, a URL's
// host), before anything is resolved: a name passes only a name rule, an address only an address
// rule, so neither a DNS answer nor an address spelled for an allowed name widens the list.
func (l List) Decide(host string, port int) Decision {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if port < 1 || port > 65535 {
		return Decision{Reason: fmt.Sprintf("port %d is not a port", port)}
	}
	if a, ok := parseAddr(host); ok {
		for _, r := range l.rules {
			if r.addr.IsValid() && r.addr == a && r.allowsPort(port) {
				return Decision{Allowed: true, Rule: r}
			}
		}
		return Decision{Reason: fmt.Sprintf("the address %s is not on the allow-list (an address passes only an entry that names it)", netip.AddrPortFrom(a, uint16(port)))}
	}
	name, err := hostName(host)
	if err != nil {
		return Decision{Reason: err.Error()}
	}
	for _, r := range l.rules {
		if r.addr.IsValid() || !r.allowsPort(port) {
			continue
		}
		if (!r.suffix && name == r.name) || (r.suffix && strings.HasSuffix(name, "."+r.name)) {
			return Decision{Allowed: true, Rule: r}
		}
	}
	return Decision{Reason: fmt.Sprintf("%s:%d is not on the allow-list", name, port)}
}

// AdmitAddress checks an address a name allowed by rule resolved to, before it is dialled. A name
// that resolves to loopback, a private or link-local network, or an unspecified or multicast
// address is refused (DNS rebinding: a public name pointed at the runner or its network); only an
// entry that names the address itself reaches such a place.
func AdmitAddress(rule Rule, a netip.Addr) error {
	a = a.Unmap()
	if rule.addr.IsValid() {
		if a != rule.addr {
			return fmt.Errorf("%s is not the address the entry %s names", a, rule.Entry)
		}
		return nil
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() || isShared(a) {
		return fmt.Errorf("%s resolved to %s, a local or private address: only an entry naming the address reaches it (DNS rebinding)", rule.Entry, a)
	}
	return nil
}

// isShared reports the carrier-grade NAT range 100.64.0.0/10, private in all but name.
func isShared(a netip.Addr) bool {
	return netip.MustParsePrefix("100.64.0.0/10").Contains(a)
}

// Block is one refused connection: where it went and what tried.
type Block struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Command string `json:"command"`
	Reason  string `json:"reason"`
	// Count is how many times the same command tried the same host and port.
	Count int `json:"count"`
}

// MaxBlocksKept bounds the blocks a run keeps for its status comment and evidence: an agent that
// loops over addresses must not grow the comment or the studio's memory.
const MaxBlocksKept = 50

// Blocks keeps the blocked connections of a run: each host, port and command once with a count,
// the first MaxBlocksKept of them, and a count of the rest.
type Blocks struct {
	kept    []Block
	Dropped int // blocks past MaxBlocksKept, not kept
	Total   int // every block, kept or not
}

// Add records one block.
func (b *Blocks) Add(x Block) {
	b.Total++
	for i := range b.kept {
		k := &b.kept[i]
		if k.Host == x.Host && k.Port == x.Port && k.Command == x.Command {
			k.Count++
			return
		}
	}
	if len(b.kept) >= MaxBlocksKept {
		b.Dropped++
		return
	}
	x.Count = 1
	b.kept = append(b.kept, x)
}

// Kept are the blocks kept, by host then port then command.
func (b *Blocks) Kept() []Block {
	out := append([]Block{}, b.kept...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Host != out[j].Host {
			return out[i].Host < out[j].Host
		}
		if out[i].Port != out[j].Port {
			return out[i].Port < out[j].Port
		}
		return out[i].Command < out[j].Command
	})
	return out
}

// Hosts are the distinct host:port pairs blocked, for the advice on how to allow them.
func (b *Blocks) Hosts() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range b.Kept() {
		h := k.Host
		if strings.Contains(h, ":") {
			h = "[" + h + "]"
		}
		if k.Port != 443 && k.Port != 80 {
			h += ":" + strconv.Itoa(k.Port)
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}
