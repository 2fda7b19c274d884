package threads

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/codex-studio/studio-action/bot/hub"
)

// fakeGit is an in-memory Git database that counts its requests as GitHub would see them (the
// record read is two: the ref and its commit).
type fakeGit struct {
	mu       sync.Mutex
	objects  map[string][]byte
	messages map[string]string
	refs     map[string]string
	requests int
}

func newFakeGit() *fakeGit {
	return &fakeGit{objects: map[string][]byte{}, messages: map[string]string{}, refs: map[string]string{}}
}

func (g *fakeGit) put(data []byte) string {
	sum := sha1.Sum(data)
	sha := hex.EncodeToString(sum[:])
	g.objects[sha] = data
	return sha
}

func (g *fakeGit) CreateBlob(_ context.Context, content []byte) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	return g.put(bytes.Clone(content)), nil
}

func (g *fakeGit) BlobBytes(_ context.Context, sha string) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	data, ok := g.objects[sha]
	if !ok {
		return nil, hub.ErrNotFound
	}
	return data, nil
}

func (g *fakeGit) CreateFileTree(_ context.Context, name, blob string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	return g.put([]byte("tree " + name + " " + blob)), nil
}

func (g *fakeGit) CreateRecordCommit(_ context.Context, message, tree string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	sha := g.put([]byte("commit " + tree + "\n" + message))
	g.messages[sha] = message
	return sha, nil
}

func (g *fakeGit) CreateRef(_ context.Context, ref, sha string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	if _, ok := g.refs[ref]; ok {
		return hub.ErrRefExists
	}
	g.refs[ref] = sha
	return nil
}

func (g *fakeGit) SetRef(_ context.Context, ref, sha string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	g.refs[ref] = sha
	return nil
}

func (g *fakeGit) LockRecord(_ context.Context, ref string) (string, string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests += 2
	sha, ok := g.refs[ref]
	if !ok {
		return "", "", fmt.Errorf("read %s: %w", ref, hub.ErrNotFound)
	}
	return sha, g.messages[sha], nil
}

func (g *fakeGit) count() int { g.mu.Lock(); defer g.mu.Unlock(); return g.requests }

// A kept thread comes back byte for byte with its record, in three requests, and the chain keeps
// only the last runs.
func TestSaveThenLoadInThreeRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newFakeGit()
	s := Store{Git: g}
	if k, err := s.Load(ctx, 4); k != nil || err != nil {
		t.Fatalf("nothing kept yet: %+v, %v", k, err)
	}
	rollout := bytes.Repeat([]byte(`{"type":"response_item","payload":{"text":"hello"}}`+"\n"), 1000)
	rec := Record{Thread: "0199a1b2-c3d4", Path: "sessions/2026/12/05/rollout-x-0199a1b2-c3d4.jsonl", Role: "gameplay-programmer", Branch: "studio/task-4"}
	for i := 0; i < MaxChain+3; i++ {
		rec.Chain = append(rec.Chain, Link{Thread: rec.Thread, Run: fmt.Sprint(100 + i), Turns: 1, Ended: "paused"})
	}
	before := g.count()
	saved, err := s.Save(ctx, 4, rec, rollout, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := g.count() - before; n != 4 {
		t.Errorf("keeping a thread took %d requests, want 4 (blob, tree, commit, ref)", n)
	}
	// Kept again under the same ref with a wrong guess: one request more, the ref moved.
	if _, err := s.Save(ctx, 4, rec, rollout, false); err != nil {
		t.Fatal(err)
	}
	if len(saved.Chain) != MaxChain || saved.Chain[0].Run != "103" {
		t.Errorf("chain kept %d runs from %s, want the last %d", len(saved.Chain), saved.Chain[0].Run, MaxChain)
	}
	before = g.count()
	k, err := s.Load(ctx, 4)
	if err != nil || k == nil {
		t.Fatalf("load: %+v, %v", k, err)
	}
	if n := g.count() - before; n > 3 {
		t.Errorf("restoring took %d requests, want at most 3", n)
	}
	if !bytes.Equal(k.Rollout, rollout) || k.Record.Thread != rec.Thread || k.Record.Path != rec.Path || k.Record.Bytes != len(rollout) || k.Record.Last().Run != "122" {
		t.Errorf("restored %d bytes, record %+v", len(k.Rollout), k.Record)
	}
	if len(g.objects[k.Record.Blob]) >= len(rollout)/10 {
		t.Errorf("the blob is %d bytes for a %d-byte rollout: not compressed", len(g.objects[k.Record.Blob]), len(rollout))
	}
	if _, err := s.Save(ctx, 4, rec, make([]byte, MaxRolloutBytes+1), true); err == nil {
		t.Error("a rollout over the bound was kept")
	}
}

// What the agent or anyone with push rights could leave under the ref does not resume: a foreign
// commit, a record of another issue, a blob that is no gzip, a gzip bomb.
func TestUnusableThreadsAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bomb := func() []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(make([]byte, MaxRolloutBytes+10))
		zw.Close()
		return buf.Bytes()
	}()
	for name, c := range map[string]struct {
		message string
		blob    []byte
		want    string
	}{
		"foreign commit": {message: "fix typo", want: "no thread record"},
		"other issue":    {message: Message(Record{Version: 1, Issue: 9, Thread: "t", Blob: "B"}), want: "for #9"},
		"not gzip":       {message: Message(Record{Version: 1, Issue: 4, Thread: "t", Blob: "B"}), blob: []byte("plain text"), want: "not gzip"},
		"gzip bomb":      {message: Message(Record{Version: 1, Issue: 4, Thread: "t", Blob: "B"}), blob: bomb, want: "over"},
		"missing blob":   {message: Message(Record{Version: 1, Issue: 4, Thread: "t", Blob: "C"}), want: "cannot be read"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := newFakeGit()
			g.objects["B"] = c.blob
			g.refs[Ref(4)] = "commit"
			g.messages["commit"] = c.message
			_, err := Store{Git: g}.Load(ctx, 4)
			var u *Unusable
			if !errors.As(err, &u) || !strings.Contains(u.Why, c.want) {
				t.Errorf("load = %v, want an Unusable saying %q", err, c.want)
			}
		})
	}
}
