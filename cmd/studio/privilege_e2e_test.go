package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"golang.org/x/sys/unix"
)

// privilegeMinter is the scripted agent of issue 31.4: in .godot/ (ignored, so no scan, commit or
// put-back touches it) it makes a set-uid and a set-gid copy of id (and more in /tmp and
// /var/tmp, which are the host's for the uid jail's agent), and gives two copies of cat
// CAP_SETUID and CAP_DAC_OVERRIDE through security.capability: with setxattr, directly and as root
// of a user namespace of its own, and with setcap there. Each attempt writes its answer to
// .godot/report.txt, the control that it ran.
const privilegeMinter = `mkdir -p .godot && r=.godot/report.txt && : > $r
cp /usr/bin/id .godot/id-suid && chmod u+s .godot/id-suid 2>>$r; echo "chmod-setuid rc=$?" >> $r
cp /usr/bin/id .godot/id-sgid && chmod g+s .godot/id-sgid 2>>$r; echo "chmod-setgid rc=$?" >> $r
cp /usr/bin/cat .godot/cat-cap && cp /usr/bin/cat .godot/cat-setcap
cat > .godot/setcap.py <<'PY'
import errno, os, sys
# VFS_CAP_REVISION_2 with the effective flag; permitted CAP_DAC_OVERRIDE (1) and CAP_SETUID (7).
cap = bytes.fromhex("01000002" "82000000" "00000000" "00000000" "00000000")
try:
    os.setxattr(sys.argv[2], "security.capability", cap)
    print(sys.argv[1] + ": ok")
except OSError as e:
    print(sys.argv[1] + ": " + errno.errorcode.get(e.errno, str(e.errno)))
PY
/usr/bin/python3 .godot/setcap.py setxattr-direct .godot/cat-cap >> $r 2>&1
/usr/bin/unshare -Ur /usr/bin/python3 .godot/setcap.py setxattr-userns .godot/cat-cap >> $r 2>&1; echo "unshare-python rc=$?" >> $r
/usr/bin/unshare -Ur /usr/sbin/setcap cap_setuid,cap_dac_override+ep .godot/cat-setcap 2>>$r; echo "unshare-setcap rc=$?" >> $r
for d in /tmp /var/tmp; do
  { cp /usr/bin/id $d/studio-minted-$(id -u) && chmod u+s $d/studio-minted-$(id -u); } 2>>$r; echo "$d-setuid rc=$?" >> $r
done
echo attacked >> $r
`

// TestMintedPrivilegesDoNotOutliveTheCall: what issue 31.4 measured, in every containment and
// with the workspace owned by root and by the runner's account. After the run, nothing in the
// workspace carries a set-id bit or a file capability, and `nobody` running the copies gets its
// own uid and gid and no capability.
func TestMintedPrivilegesDoNotOutliveTheCall(t *testing.T) {
	requireRoot(t)
	for _, c := range containments {
		for _, owner := range []struct {
			name string
			uid  int
		}{{"root's workspace", 0}, {"runner's workspace", runnerUID}} {
			t.Run(c.name+"/"+owner.name, func(t *testing.T) {
				files := sandbox.DefaultFiles("fast-prototype")
				files[".gitignore"] = ".godot/\n"
				// nobody must reach the workspace to run what was left there: the test's own folders
				// are opened, never the temporary folder above them (/tmp keeps its 1777).
				dir := t.TempDir()
				for d := dir; d != filepath.Clean(os.TempDir()) && d != "/"; d = filepath.Dir(d) {
					if err := os.Chmod(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				sw, err := sandbox.New(sandbox.Options{Files: files, Dir: dir})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(sw.Close)
				w := worldOf(t, sw)
				if owner.uid != 0 {
					chownTree(t, w.Workspace, owner.uid)
				}
				body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n```\n"
				n := w.issue("Jump", body)
				_, payload := w.comment(n, sandbox.Writer, "/studio run")
				w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Shell: privilegeMinter})
				inputs := map[string]string{"INPUT_MAX-FIX-PASSES": "0"}
				for k, v := range c.inputs {
					inputs[k] = v
				}
				if res := w.run("issue_comment", payload, inputs); res.code != 0 {
					t.Fatalf("exit %d\n%s", res.code, res.stderr)
				}

				godot := filepath.Join(w.Workspace, ".godot")
				report, err := os.ReadFile(filepath.Join(godot, "report.txt"))
				if err != nil {
					t.Fatalf("control: the agent's report is missing: %v", err)
				}
				for _, attempt := range []string{"chmod-setuid rc=", "chmod-setgid rc=", "setxattr-direct: ", "setxattr-userns: ", "unshare-python rc=", "unshare-setcap rc=", "/tmp-setuid rc=", "/var/tmp-setuid rc=", "attacked"} {
					if !bytes.Contains(report, []byte(attempt)) {
						t.Errorf("control: the agent's %q attempt did not run:\n%s", attempt, report)
					}
				}
				t.Logf("the agent's attempts:\n%s", report)

				_ = filepath.WalkDir(w.Workspace, func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.Type()&fs.ModeSymlink != 0 {
						return nil
					}
					if fi, err := d.Info(); err == nil && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
						t.Errorf("%s is %v on disk after the run", p, fi.Mode())
					}
					if _, err := unix.Lgetxattr(p, "security.capability", make([]byte, 64)); !errors.Is(err, unix.ENODATA) {
						t.Errorf("%s carries security.capability after the run (%v)", p, err)
					}
					return nil
				})

				for _, id := range []string{"id-suid", "id-sgid"} {
					if got := asNobody(t, filepath.Join(godot, id), "-u"); got != "65534" {
						t.Errorf("nobody ran %s -u and got euid %s", id, got)
					}
					if got := asNobody(t, filepath.Join(godot, id), "-g"); got != "65534" {
						t.Errorf("nobody ran %s -g and got egid %s", id, got)
					}
				}
				// The uid jail's agent writes the host's temporary folders where they are open to all
				// (the sandbox's are its own, gone with the call).
				planted := 0
				for _, d := range []string{"/tmp", "/var/tmp"} {
					minted := fmt.Sprintf("%s/studio-minted-%d", d, w.AgentUID)
					fi, err := os.Lstat(minted)
					if err != nil {
						continue
					}
					planted++
					t.Cleanup(func() { os.Remove(minted) })
					if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
						t.Errorf("%s is %v after the run", minted, fi.Mode())
					}
					if got := asNobody(t, minted, "-u"); got != "65534" {
						t.Errorf("nobody ran %s -u and got euid %s", minted, got)
					}
				}
				// The uid jail removes what a leased uid left there after each call; the agent's
				// report says it did write there.
				if c.name != "sandbox" && !bytes.Contains(report, []byte("/tmp-setuid rc=0")) {
					t.Errorf("control: the uid jail's agent could write no host temporary folder:\n%s", report)
				}
				if c.name == "sandbox" && planted > 0 {
					t.Error("the sandboxed agent wrote the host's temporary folders")
				}
				for _, cat := range []string{"cat-cap", "cat-setcap"} {
					var caps []string
					for _, line := range strings.Split(asNobody(t, filepath.Join(godot, cat), "/proc/self/status"), "\n") {
						if strings.HasPrefix(line, "CapPrm:") || strings.HasPrefix(line, "CapEff:") {
							caps = append(caps, line)
						}
					}
					if len(caps) != 2 || strings.Trim(caps[0][7:]+caps[1][7:], "\t0") != "" {
						t.Errorf("nobody ran %s and got capabilities: %q", cat, caps)
					}
				}
			})
		}
	}
}

// asNobody runs path with args as nobody (65534, no groups) and returns its trimmed output; a run
// that fails fails the test, so an answer of nobody's own uid is nobody's, not a missing file's.
func asNobody(t *testing.T, path string, args ...string) string {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nobody could not run %s: %v\n%s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

// chownTree gives dir and everything in it to uid (and the group of the same number).
func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(fmt.Errorf("give the workspace to uid %d: %w", uid, err))
	}
}

// keyringAgent is the scripted agent of issue 31.7 (keyrings), in python3 through the raw system
// calls (no keyutils on the runner). "plant" links its user keyring into its session keyring (to
// possess it), stores a key in each, readable by its owner uid, and writes their serials to
// .godot/keys.txt; "read" looks for the key by name in both and by those serials. Each writes
// its answers to .godot/<mode>.txt.
const keyringAgent = `mkdir -p .godot && cat > .godot/keys.py <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
U, S = -4, -3  # KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING
def call(*a):
    r = libc.syscall(*a)
    return r if r >= 0 else "E" + errno.errorcode.get(ctypes.get_errno(), "?")
def read(serial):
    buf = ctypes.create_string_buffer(256)
    n = call(KEYCTL, 11, ctypes.c_long(serial), buf, 256)  # KEYCTL_READ
    return buf.raw[:n].decode() if isinstance(n, int) else n
out = open(".godot/" + sys.argv[1] + ".txt", "w")
if sys.argv[1] == "plant":
    out.write("link %s\n" % call(KEYCTL, 8, ctypes.c_long(U), ctypes.c_long(S)))  # KEYCTL_LINK
    serials = []
    for name, ring in (("@u", U), ("@s", S)):
        k = call(ADD_KEY, b"user", b"studio-leak", sys.argv[2].encode(), len(sys.argv[2]), ctypes.c_long(ring))
        out.write("add %s %s\n" % (name, k))
        if isinstance(k, int):
            call(KEYCTL, 5, ctypes.c_long(k), ctypes.c_long(0x3f3f0000))  # KEYCTL_SETPERM
            serials.append(str(k))
    open(".godot/keys.txt", "w").write(" ".join(serials))
else:
    for name, ring in (("@u", U), ("@s", S)):
        k = call(KEYCTL, 10, ctypes.c_long(ring), b"user", b"studio-leak", 0)  # KEYCTL_SEARCH
        out.write("search %s %s %s\n" % (name, k, read(k) if isinstance(k, int) else ""))
    for s in open(".godot/keys.txt").read().split():
        out.write("serial %s %s\n" % (s, read(int(s))))
out.write("done\n")
PY
/usr/bin/python3 .godot/keys.py "$@"
`

// TestKeysDoNotReachTheNextRun: an agent stores a key in its user and its session keyring; the
// next run, which takes the same agent uid, finds nothing by name or by serial. In the sandbox
// the keyring calls are refused (ENOSYS); in the uid jail they work during the call and what
// they stored is gone once it ends.
func TestKeysDoNotReachTheNextRun(t *testing.T) {
	requireRoot(t)
	for _, c := range containments {
		t.Run(c.name, func(t *testing.T) {
			files := sandbox.DefaultFiles("fast-prototype")
			files[".gitignore"] = ".godot/\n"
			w := newWorld(t, files)
			secret := fmt.Sprintf("studio-secret-%d", w.AgentUID)
			inputs := map[string]string{"INPUT_MAX-FIX-PASSES": "0"}
			for k, v := range c.inputs {
				inputs[k] = v
			}
			for i, mode := range []string{"plant " + secret, "read"} {
				body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n```\n"
				n := w.issue(fmt.Sprintf("Jump %d", i), body)
				_, payload := w.comment(n, sandbox.Writer, "/studio run")
				w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: fmt.Sprintf("x%d\n", i)}},
					Shell: "set -- " + mode + "\n" + keyringAgent})
				if res := w.run("issue_comment", payload, inputs); res.code != 0 {
					t.Fatalf("run %d: exit %d\n%s", i+1, res.code, res.stderr)
				}
			}
			planted, err := os.ReadFile(filepath.Join(w.Workspace, ".godot", "plant.txt"))
			if err != nil || !bytes.Contains(planted, []byte("done")) {
				t.Fatalf("control: the first run's agent did not try (%v):\n%s", err, planted)
			}
			read, err := os.ReadFile(filepath.Join(w.Workspace, ".godot", "read.txt"))
			if err != nil || !bytes.Contains(read, []byte("done")) {
				t.Fatalf("control: the next run's agent did not try (%v):\n%s", err, read)
			}
			t.Logf("the first run's agent:\n%sthe next run's agent:\n%s", planted, read)
			if c.name == "sandbox" {
				if !bytes.Contains(planted, []byte("add @u EENOSYS")) {
					t.Errorf("the sandboxed agent could use its keyrings:\n%s", planted)
				}
			} else if !regexp.MustCompile(`add @u \d+\nadd @s \d+`).Match(planted) {
				t.Errorf("control: the uid jail's agent could not store its keys:\n%s", planted)
			}
			if bytes.Contains(read, []byte(secret)) {
				t.Errorf("the next run's agent read the key the first one stored:\n%s", read)
			}
		})
	}
}
