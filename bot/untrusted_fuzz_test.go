package bot

import (
	"strings"
	"testing"
)

// FuzzRenderUntrusted: whatever text and file name the agent, its verification or a review
// writes, no renderer of untrusted text (the verdict, the review body, the failure and lifecycle
// tails, mode notes, name lists, a step's detail) lets a mention, image, link, HTML or heading
// become live outside a fence or code span, or a line pass for the bot's "**Verdict:**".
func FuzzRenderUntrusted(f *testing.F) {
	for i, text := range hostileTexts {
		f.Add(text, hostileNames[i%len(hostileNames)])
	}
	f.Add("````\n@x\n`````", "``` @x")
	f.Add("~~~\n![a](b)\n~~~", "a\r@b")
	f.Fuzz(func(t *testing.T, text, name string) {
		for which, md := range renderedUntrusted(text, name) {
			if p := liveMarkup(md); len(p) > 0 {
				t.Fatalf("%s of text %q, name %q:\n%s\n---\n%s", which, text, name, strings.Join(p, "\n"), md)
			}
		}
	})
}
