package egress

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": AllowList, "allow-list": AllowList, " Model-Only ": ModelOnly, "open": Open} {
		got, err := ParseMode(in)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("closed"); err == nil || !strings.Contains(err.Error(), "allow-list, model-only or open") {
		t.Errorf("ParseMode(closed) = %v; want the choices named", err)
	}
}

func TestParseRuleRefusesWhatIsNotAHost(t *testing.T) {
	for entry, want := range map[string]string{
		"":                               "empty",
		"https://example.com":            "not a URL",
		"example.com/path":               "not a URL",
		"user@example.com":               "not a URL",
		"*":                              "network: open",
		"ex*ample.com":                   "first label",
		"*.com":                          "two labels",
		"example.com:0":                  "from 1 to 65535",
		"example.com:99999":              "from 1 to 65535",
		"example.com:http":               "from 1 to 65535",
		"example.com:":                   "port is empty",
		"::1":                            "brackets",
		"[::1":                           "closing",
		"[::1]x":                         "only a port",
		"2130706433":                     "reads as an address",
		"0x7f000001":                     "reads as an address",
		"127.1":                          "reads as an address",
		"exa mple.com":                   "not a URL",
		"bücher.example":                 "xn-- form",
		"-bad.example.com":               "hyphen",
		"a..example.com":                 "label is empty",
		strings.Repeat("a", 64) + ".com": "63",
	} {
		if _, err := ParseRule(entry); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q) = %v; want an error saying %q", entry, err, want)
		}
	}
}

func TestDecide(t *testing.T) {
	l, err := ParseList([]string{"example.com", "*.pkg.example.org", "mirror.example.net:8443", "127.0.0.1:4873", "[::1]:9000", "10.1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host    string
		port    int
		allowed bool
		rule    string
	}{
		{"example.com", 443, true, "example.com"},
		{"EXAMPLE.com.", 80, true, "example.com"},
		{"example.com", 22, false, ""},
		{"www.example.com", 443, false, ""}, // a name entry is that name only
		{"a.pkg.example.org", 443, true, "*.pkg.example.org"},
		{"a.b.pkg.example.org", 443, true, "*.pkg.example.org"},
		{"pkg.example.org", 443, false, ""}, // `*.` is what is below, not the domain itself
		{"evilpkg.example.org", 443, false, ""},
		{"mirror.example.net", 8443, true, "mirror.example.net:8443"},
		{"mirror.example.net", 443, false, ""},
		{"127.0.0.1", 4873, true, "127.0.0.1:4873"},
		{"127.0.0.1", 4874, false, ""},
		{"::ffff:127.0.0.1", 4873, true, "127.0.0.1:4873"},
		{"[::1]", 9000, true, "[::1]:9000"},
		{"10.1.2.3", 443, true, "10.1.2.3"},
		{"93.184.216.34", 443, false, ""}, // an address for an allowed name is not the name
		{"2130706433", 443, false, ""},
		{"localhost", 4873, false, ""},
		{"example.com", 0, false, ""},
	} {
		d := l.Decide(c.host, c.port)
		if d.Allowed != c.allowed || d.Rule.Entry != c.rule {
			t.Errorf("Decide(%q, %d) = %+v; want allowed %v by %q", c.host, c.port, d, c.allowed, c.rule)
		}
		if !d.Allowed && d.Reason == "" {
			t.Errorf("Decide(%q, %d) refused without a reason", c.host, c.port)
		}
	}
}

func TestParseListKeepsTheGoodEntriesAndNamesEveryBadOne(t *testing.T) {
	l, err := ParseList([]string{"example.com", "http://bad", " ", "example.com", "*", "ok.example.org:8080"})
	if err == nil || !strings.Contains(err.Error(), `"http://bad"`) || !strings.Contains(err.Error(), `"*"`) {
		t.Fatalf("err = %v; want both bad entries named", err)
	}
	if got := strings.Join(l.Entries(), ","); got != "example.com,ok.example.org:8080" {
		t.Errorf("entries = %s", got)
	}
	if got := SplitEntries("a.com, b.com\n*.c.com\tlocalhost:1"); len(got) != 4 {
		t.Errorf("SplitEntries = %q", got)
	}
}

func TestAdmitAddressRefusesRebinding(t *testing.T) {
	name, _ := ParseRule("example.com")
	local, _ := ParseRule("127.0.0.1:4873")
	for _, c := range []struct {
		rule Rule
		addr string
		ok   bool
	}{
		{name, "93.184.216.34", true},
		{name, "2606:2800:220:1:248:1893:25c8:1946", true},
		{name, "127.0.0.1", false},
		{name, "::1", false},
		{name, "::ffff:127.0.0.1", false},
		{name, "10.0.0.1", false},
		{name, "192.168.1.1", false},
		{name, "172.16.0.1", false},
		{name, "169.254.169.254", false}, // the cloud metadata service
		{name, "100.64.0.1", false},
		{name, "0.0.0.0", false},
		{name, "fe80::1", false},
		{name, "fd00::1", false},
		{local, "127.0.0.1", true},
		{local, "127.0.0.2", false},
	} {
		err := AdmitAddress(c.rule, netip.MustParseAddr(c.addr))
		if (err == nil) != c.ok {
			t.Errorf("AdmitAddress(%s, %s) = %v; want ok %v", c.rule, c.addr, err, c.ok)
		}
	}
}

func TestBlocksAreBoundedAndCounted(t *testing.T) {
	var b Blocks
	for i := 0; i < 3; i++ {
		b.Add(Block{Host: "evil.example", Port: 443, Command: "curl", Reason: "not on the allow-list"})
	}
	for i := 0; i < MaxBlocksKept+10; i++ {
		b.Add(Block{Host: "h" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + ".example", Port: 443, Command: "loop"})
	}
	kept := b.Kept()
	if len(kept) != MaxBlocksKept || b.Total != 3+MaxBlocksKept+10 || b.Dropped != 11 {
		t.Fatalf("kept %d, total %d, dropped %d", len(kept), b.Total, b.Dropped)
	}
	var evil Block
	for _, k := range kept {
		if k.Host == "evil.example" {
			evil = k
		}
	}
	if evil.Count != 3 {
		t.Errorf("the repeated block counts %d; want 3", evil.Count)
	}
	var one Blocks
	one.Add(Block{Host: "::1", Port: 22, Command: "ssh"})
	one.Add(Block{Host: "example.com", Port: 443, Command: "curl"})
	if got := strings.Join(one.Hosts(), " "); got != "[::1]:22 example.com" {
		t.Errorf("Hosts = %q", got)
	}
}
