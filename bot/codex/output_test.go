package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// floodCodex writes a stand-in for codex that prints a few real events, one line of long bytes,
// flood bytes of short event lines, the end of the turn, and stderr bytes on stderr: what an
// agent can make Codex print, or print to Codex's stdout itself.
func floodCodex(t testing.TB, dir string, long, flood, stderr int) string {
	t.Helper()
	script := filepath.Join(dir, "flood-codex")
	body := `#!/bin/sh
cat >/dev/null
printf '%s\n' '{"type":"thread.started","thread_id":"t"}' '{"type":"turn.started"}'
printf '{"type":"item.completed","item":{"type":"agent_message","text":"LONG-START-sk-secret-value'
head -c ` + strconv.Itoa(long) + ` /dev/zero | tr '\0' a
printf '"}}\n'
yes '{"type":"item.completed","item":{"type":"reasoning","text":"flood"}}' | head -c ` + strconv.Itoa(flood) + `
printf '\n%s\n' '{"type":"item.completed","item":{"type":"agent_message","text":"done"}}' '{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":2}}'
head -c ` + strconv.Itoa(stderr) + ` /dev/zero | tr '\0' e >&2
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestCLIRunBoundsCodexOutput: Codex prints one 12 MiB line, 80 MiB of short lines and 1 MB of
// stderr. The call's events.jsonl and the run's copy stay within the total bound, the long line is
// kept to its start (a secret in it still masked), and the evidence, the step's lines and its
// result say what was cut.
func TestCLIRunBoundsCodexOutput(t *testing.T) {
	const long, flood, stderr = 12 << 20, 80 << 20, 1_000_000
	dir := t.TempDir()
	cli := CLI{Bin: floodCodex(t, dir, long, flood, stderr), Env: []string{"PATH=/usr/bin:/bin"}, Redactor: NewRedactor("sk-secret-value")}
	runDir := filepath.Join(dir, "run")
	res := cli.Run(context.Background(), Request{Workdir: dir, Prompt: "p", RunDir: runDir})

	const bound = 64<<20 + 4096 // the total bound and the studio's marker line
	fi, err := os.Stat(res.EventsPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > bound {
		t.Errorf("events.jsonl holds %d bytes, want at most %d", fi.Size(), bound)
	}
	f, err := os.Open(res.EventsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var lines []string
	for sc.Scan() {
		if len(lines) < 3 || strings.Contains(sc.Text(), `"studio.output_cut"`) {
			lines = append(lines, sc.Text())
		}
	}
	// Control: the stand-in really printed the long line, and the events before it were read.
	if len(lines) < 3 || !strings.HasPrefix(lines[2], `{"type":"item.completed","item":{"type":"agent_message","text":"LONG-START-***aaa`) {
		t.Fatalf("the long line's start is not in the evidence (first lines %.200q)", lines)
	}
	if n := len(lines[2]); n > 4<<20 {
		t.Errorf("the long line was kept whole or nearly (%d bytes)", n)
	}
	if res.Events.Events < 2 {
		t.Errorf("events read = %d, want those before the flood", res.Events.Events)
	}
	var marker struct {
		Type         string `json:"type"`
		LinesCut     int    `json:"linesCut"`
		BytesCut     int64  `json:"bytesCut"`
		LinesDropped int    `json:"linesDropped"`
	}
	if last := lines[len(lines)-1]; json.Unmarshal([]byte(last), &marker) != nil || marker.Type != "studio.output_cut" ||
		marker.LinesCut != 1 || marker.BytesCut < long-(4<<20) || marker.LinesDropped == 0 {
		t.Errorf("the evidence does not say what was cut: %.300q", last)
	}
	exe := Execution{Result: res}
	if text := strings.Join(exe.Lines("implementation"), "\n"); !strings.Contains(text, "Codex's output was cut: 1 event line(s) over 4194304 bytes") ||
		!strings.Contains(text, "stderr kept to its last 64000 bytes") {
		t.Errorf("the step's lines do not say what was cut:\n%.2000s", text)
	}
	data, _ := json.Marshal(exe)
	if !strings.Contains(string(data), `"outputCut":{"linesCut":1`) {
		t.Errorf("result.json does not say what was cut: %.500s", data)
	}
	ev, err := NewEvidence(filepath.Join(dir, "runs"), "r", "role", cli.Redactor)
	if err != nil {
		t.Fatal(err)
	}
	if err := ev.AppendEvents("implementation", res); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(ev.Dir, "events.jsonl")); err != nil || fi.Size() > bound+4096 {
		t.Errorf("the run's events.jsonl: %v bytes (%v), want at most %d", fi.Size(), err, bound+4096)
	}
}

// BenchmarkCodexFloodedStdout: what one long line on Codex's stdout costs the studio (the
// stand-in's own work is another process's). B/op is the studio's memory; evidence-B/op what it
// wrote to the call's events.jsonl.
func BenchmarkCodexFloodedStdout(b *testing.B) {
	for _, long := range []int{8 << 20, 32 << 20, 128 << 20} {
		b.Run(strconv.Itoa(long>>20)+"MiB", func(b *testing.B) {
			dir := b.TempDir()
			cli := CLI{Bin: floodCodex(b, dir, long, 1<<20, 1000), Env: []string{"PATH=/usr/bin:/bin"}, Redactor: NewRedactor("sk-secret-value")}
			var evidence int64
			b.ReportAllocs()
			for b.Loop() {
				res := cli.Run(context.Background(), Request{Workdir: dir, Prompt: "p", RunDir: filepath.Join(dir, "run")})
				if fi, err := os.Stat(res.EventsPath); err == nil {
					evidence += fi.Size()
				}
			}
			b.ReportMetric(float64(evidence)/float64(b.N), "evidence-B/op")
		})
	}
}

// The writer's rules on small bounds: a long line keeps its start, never a piece of a secret the
// cut split; a line past the total is dropped with every later one; writes split anywhere give
// the same file; the marker says what was cut.
func TestEventsWriterBounds(t *testing.T) {
	stream := "short\n0123456789ABCDEF\nab sk-secret-value!\nfits\nover the total\nlate\nx"
	for _, chunk := range []int{1, 3, len(stream)} {
		var out strings.Builder
		w := newEventsWriter(NewRedactor("sk-secret-value"), &out)
		w.maxLine, w.maxTotal = 8, 26
		for s := stream; s != ""; {
			n := min(chunk, len(s))
			if _, err := w.Write([]byte(s[:n])); err != nil {
				t.Fatal(err)
			}
			s = s[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want := "short\n01234567\nab \nfits\n" +
			`{"type":"studio.output_cut","linesCut":3,"bytesCut":25,"linesDropped":3,"bytesDropped":16,"maxLineBytes":8,"maxTotalBytes":26}` + "\n"
		if out.String() != want {
			t.Errorf("chunks of %d:\n%q\nwant\n%q", chunk, out.String(), want)
		}
	}
}

// The run's events.jsonl: each call after its studio.call line, a last line without its newline
// ended, a secret the run learnt after the call masked, what was cut said in the call's line.
func TestAppendEventsStreamsRedacted(t *testing.T) {
	dir := t.TempDir()
	red := NewRedactor()
	ev, err := NewEvidence(dir, "r", "role", red)
	if err != nil {
		t.Fatal(err)
	}
	first, second := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	if err := os.WriteFile(first, []byte("{\"a\":1}\n{\"late\":\"tok-learnt-later\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, []byte("{\"b\":1}"), 0o644); err != nil {
		t.Fatal(err)
	}
	red.Add("tok-learnt-later")
	if err := ev.AppendEvents("implementation", Result{Model: "m", EventsPath: first}); err != nil {
		t.Fatal(err)
	}
	if err := ev.AppendEvents("review", Result{Model: "m", EventsPath: second, OutputCut: OutputCut{LinesCut: 1, BytesCut: 9}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(ev.Dir, "events.jsonl"))
	want := `{"model":"m","step":"implementation","type":"studio.call"}
{"a":1}
{"late":"***"}
{"model":"m","outputCut":{"linesCut":1,"bytesCut":9},"step":"review","type":"studio.call"}
{"b":1}
`
	if string(data) != want {
		t.Errorf("events.jsonl =\n%s\nwant\n%s", data, want)
	}
}
