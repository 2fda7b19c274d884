package policy

import (
	"regexp"
	"strings"
)

// Issue and comment bodies are untrusted, and what GitHub shows is not what the raw text says: an
// HTML comment, a code block or a folded <details> hides text a reader never sees. ScanMarkdown
// reads a body the way GitHub renders it (CommonMark block structure, GitHub's HTML sanitizer)
// so the task block and slash commands are taken only from text a person can see.
//
// The scanner is deliberately conservative. It follows CommonMark where it matters (fences, indented
// code, HTML blocks, inline code spans, blockquotes and list items); where an exact reading would
// need a full parser it errs towards treating text as hidden, never towards treating hidden text as
// visible. In particular an HTML comment (or processing instruction, declaration, CDATA section,
// or <script>/<style>-like element) that is not closed where GitHub would close it hides the rest
// of the body, as it does in a browser.

// Fence is a fenced code block as GitHub renders it.
type Fence struct {
	Info      string // the info string, trimmed ("studio" for a task block)
	Open      int    // 1-based line of the opening fence
	Close     int    // 1-based line of the closing fence; 0 when the block is never closed
	TopLevel  bool   // not inside a blockquote or a list item
	InDetails bool   // inside a <details> element
}

// ProseLine is a line that begins with visible, top-level prose: outside code blocks, inline code,
// HTML comments and other hidden HTML, blockquotes, list items and <details>, and starting where
// the source line starts (after at most three spaces).
type ProseLine struct {
	Num  int    // 1-based line number in the body
	Text string // the line as shown: hidden inline HTML removed, surrounding spaces and tabs trimmed
}

// Markdown is what ScanMarkdown found.
type Markdown struct {
	Fences []Fence
	Lines  []ProseLine
}

// SplitLines splits a body into lines the way GitHub does: CRLF, CR and LF all end a line.
func SplitLines(body string) []string {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	return strings.Split(body, "\n")
}

// ScanMarkdown classifies every line of body; see Markdown.
func ScanMarkdown(body string) Markdown {
	sc := &mdScanner{}
	for i, l := range SplitLines(body) {
		if sc.forever {
			break
		}
		sc.line(i+1, l)
	}
	return sc.out
}

type openFence struct {
	index  int // in out.Fences
	char   byte
	n      int
	base   int  // content column of the list item holding it (0 at top level)
	quoted bool // inside a blockquote: ends with the first line that is not quoted
}

type mdScanner struct {
	out     Markdown
	forever bool // everything from here on is hidden

	fence     *openFence
	blockHide string // inside a hidden HTML block (comment, <?, <!X, CDATA, <script>...): its closer
	preEnd    string // inside a visible raw HTML block (<pre>): its closer
	html      bool   // inside an HTML block that ends at a blank line (CommonMark types 6 and 7)

	para       bool   // the previous line belongs to a paragraph
	paraQuoted bool   // and that paragraph is inside a blockquote
	pending    string // an inline hidden span (comment, ...) is open; its closer
	span       int    // an inline code span is open; its backtick count
	spanOpener bool   // the open code span holds text that would hide the rest if it is no span
	details    int    // open <details> elements
	lists      []int  // content columns of the open list items
}

// line scans one line of Markdown in the state the lines before it left: a hidden block, a fence,
// a raw HTML block, a paragraph or a list item, as CommonMark's block rules decide, so hidden text
// is found where GitHub would hide it. The rules' order is CommonMark's precedence, which is why
// it is one function.
func (sc *mdScanner) line(num int, s string) {
	if sc.blockHide != "" {
		j := indexFold(s, sc.blockHide)
		if j < 0 {
			return
		}
		rest := s[j+len(sc.blockHide):]
		sc.blockHide = ""
		sc.raw(rest)
		sc.endRaw()
		return
	}
	if sc.fence != nil && sc.fenceLine(num, s) {
		return
	}
	if sc.preEnd != "" {
		sc.raw(s)
		if indexFold(s, sc.preEnd) >= 0 {
			sc.preEnd = ""
			sc.endRaw()
		}
		return
	}
	blank := isBlank(s)
	if sc.html {
		if blank {
			sc.html = false
			sc.endRaw()
			return
		}
		sc.raw(s)
		return
	}
	if blank {
		sc.endParagraph()
		return
	}
	ind, content := indentCols(s), trimLeftWS(s)
	if sc.para && (sc.pending != "" || sc.span > 0) {
		if interruptsParagraph(content, sc.paraQuoted) {
			sc.endParagraph()
			if sc.forever {
				return
			}
		} else {
			// A continuation line that starts inside an inline comment or code span starts nothing.
			sc.text(num, content, false)
			return
		}
	}
	// A line that is not indented enough for the open list items ends them, unless it lazily
	// continues a paragraph.
	for len(sc.lists) > 0 && ind < sc.lists[len(sc.lists)-1] && !(sc.para && !interruptsParagraph(content, sc.paraQuoted)) {
		sc.lists = sc.lists[:len(sc.lists)-1]
	}
	base := 0
	if len(sc.lists) > 0 {
		base = sc.lists[len(sc.lists)-1]
	}
	listed := len(sc.lists) > 0
	if ind-base >= 4 {
		if sc.para { // a paragraph continuation, never the start of a command
			sc.text(num, content, false)
		}
		return // indented code: literal text
	}
	if content[0] == '>' {
		inner := stripQuotes(content)
		if isBlank(inner) {
			sc.endParagraph()
			return
		}
		if indentCols(inner) >= 4 {
			if sc.para && sc.paraQuoted {
				sc.text(num, inner, false)
			}
			return // indented code inside the quote
		}
		inner = trimLeftWS(inner)
		if !sc.para || !sc.paraQuoted {
			sc.endParagraph()
		}
		sc.block(num, inner, true, listed, base, false)
		return
	}
	if sc.para && sc.paraQuoted && !interruptsParagraph(content, true) {
		sc.text(num, content, false) // a lazy continuation of a quoted paragraph is quoted too
		return
	}
	if n, pad, ok := listMarker(content); ok && (!sc.para || interruptsParagraph(content, false)) {
		sc.endParagraph()
		col := ind + n + pad
		sc.lists = append(sc.lists, col)
		if pad == 1 && len(content) > n+1 && (content[n+1] == ' ' || content[n+1] == '\t') {
			return // five or more spaces after the marker: the item starts with indented code
		}
		inner := strings.TrimLeft(content[n:], " \t")
		if inner != "" {
			sc.block(num, inner, false, true, col, false)
		}
		return
	}
	sc.block(num, content, false, listed, base, !listed)
}

// block handles a line's content once its containers are known: an HTML block, a fence, or text.
func (sc *mdScanner) block(num int, content string, quoted, listed bool, base int, lineStart bool) {
	if closer, n := htmlHiddenBlockStart(content); n > 0 {
		sc.endParagraph()
		if sc.forever {
			return
		}
		rest := content[n:]
		j := indexFold(rest, closer)
		if j < 0 {
			sc.blockHide = closer
			return
		}
		sc.raw(rest[j+len(closer):])
		sc.endRaw()
		return
	}
	if m := fenceOpenRE.FindStringSubmatch(content); m != nil && !(m[1][0] == '`' && strings.Contains(m[2], "`")) {
		sc.endParagraph()
		if sc.forever {
			return
		}
		sc.out.Fences = append(sc.out.Fences, Fence{Info: strings.TrimSpace(m[2]), Open: num, TopLevel: !quoted && !listed, InDetails: sc.details > 0})
		sc.fence = &openFence{index: len(sc.out.Fences) - 1, char: m[1][0], n: len(m[1]), base: base, quoted: quoted}
		return
	}
	if htmlPreStart.MatchString(content) {
		sc.endParagraph()
		if sc.forever {
			return
		}
		sc.raw(content)
		if indexFold(content, "</pre>") < 0 {
			sc.preEnd = "</pre>"
		} else {
			sc.endRaw()
		}
		return
	}
	if htmlBlockStart.MatchString(content) || (!sc.para && htmlTagLine.MatchString(content)) {
		sc.endParagraph()
		if sc.forever {
			return
		}
		sc.html = true
		sc.raw(content)
		return
	}
	if !sc.para {
		sc.paraQuoted = quoted
	}
	sc.text(num, content, lineStart && !quoted)
}

// text scans paragraph text: code spans, inline hidden HTML and <details> tags. A line that
// starts a prose line is recorded when nothing hides or quotes it.
func (sc *mdScanner) text(num int, content string, lineStart bool) {
	visibleStart := lineStart && sc.span == 0 && sc.pending == "" && sc.details == 0
	shown := sc.inline(content, false)
	sc.para = true
	if visibleStart {
		sc.out.Lines = append(sc.out.Lines, ProseLine{Num: num, Text: strings.Trim(shown, " \t")})
	}
}

// raw scans the text of an HTML block: markdown is not parsed there, but comments still hide.
func (sc *mdScanner) raw(s string) { sc.inline(s, true) }

// endRaw ends an HTML block: a hidden construct still open there runs to the end in a browser.
func (sc *mdScanner) endRaw() {
	if sc.pending != "" {
		sc.forever = true
	}
	sc.para, sc.paraQuoted = false, false
}

// endParagraph ends the current paragraph. CommonMark would show an unclosed inline comment as
// text, but an unclosed one in an HTML block GitHub did not recognize as such would hide the
// rest; the scanner cannot always tell the two apart, so it hides the rest.
func (sc *mdScanner) endParagraph() {
	if sc.pending != "" || (sc.span > 0 && sc.spanOpener) {
		sc.forever = true
	}
	sc.para, sc.paraQuoted, sc.span, sc.spanOpener = false, false, 0, false
}

// inline returns the visible part of s and updates the inline state. In raw HTML (raw true)
// there are no code spans or backslash escapes.
func (sc *mdScanner) inline(s string, raw bool) string {
	var b strings.Builder
	i := 0
	for i < len(s) {
		if sc.pending != "" {
			j := indexFold(s[i:], sc.pending)
			if j < 0 {
				return b.String()
			}
			i += j + len(sc.pending)
			sc.pending = ""
			continue
		}
		if sc.span > 0 {
			end := findRun(s, i, sc.span)
			stop := end
			if end < 0 {
				stop = len(s)
			}
			if hasHiddenOpener(s[i:stop]) {
				sc.spanOpener = true
			}
			b.WriteString(s[i:stop])
			if end < 0 {
				return b.String()
			}
			i, sc.span, sc.spanOpener = end, 0, false
			continue
		}
		c := s[i]
		switch {
		case c == '\\' && !raw && i+1 < len(s) && isASCIIPunct(s[i+1]):
			b.WriteString(s[i : i+2])
			i += 2
		case c == '`' && !raw:
			k := runLen(s, i, '`')
			if end := findRun(s, i+k, k); end >= 0 {
				b.WriteString(s[i:end])
				i = end
			} else {
				sc.span, sc.spanOpener = k, false
				b.WriteString(s[i : i+k])
				i += k
			}
		case c == '<':
			if closer, n := hiddenOpener(s[i:]); n > 0 {
				sc.pending = closer
				i += n
				continue
			}
			if tagAt(s[i:], "<details") {
				sc.details++
			} else if tagAt(s[i:], "</details") && sc.details > 0 {
				sc.details--
			}
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// fenceLine handles a line while a fence is open; false means the fence ended implicitly (its
// container ended) and the line must be read afresh.
func (sc *mdScanner) fenceLine(num int, s string) bool {
	f := sc.fence
	if f.quoted {
		c := trimLeftWS(s)
		if indentCols(s) > 3 || !strings.HasPrefix(c, ">") {
			sc.fence = nil
			return false
		}
		if closesFence(stripQuotes(c), f) {
			sc.out.Fences[f.index].Close = num
			sc.fence = nil
		}
		return true
	}
	if isBlank(s) {
		return true
	}
	ind := indentCols(s)
	if ind < f.base {
		sc.fence = nil
		return false
	}
	if ind-f.base <= 3 && closesFence(trimLeftWS(s), f) {
		sc.out.Fences[f.index].Close = num
		sc.fence = nil
	}
	return true
}

// closesFence follows CommonMark: the same fence character, at least as many, then only spaces.
func closesFence(content string, f *openFence) bool {
	n := runLen(content, 0, f.char)
	return n >= f.n && isBlank(content[n:])
}

var (
	fenceOpenRE = regexp.MustCompile("^(`{3,}|~{3,})(.*)$")
	// CommonMark HTML block start conditions 1 (visible part), 6 and 7.
	htmlPreStart   = regexp.MustCompile(`(?i)^<pre(?:[ \t>]|$)`)
	htmlBlockStart = regexp.MustCompile(`(?i)^</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul)(?:[ \t>]|/>|$)`)
	htmlTagLine    = regexp.MustCompile(`^(?:<[A-Za-z][A-Za-z0-9-]*(?:[ \t]+[A-Za-z_:][A-Za-z0-9_.:-]*(?:[ \t]*=[ \t]*(?:[^ \t"'=<>` + "`" + `]+|'[^']*'|"[^"]*"))?)*[ \t]*/?>|</[A-Za-z][A-Za-z0-9-]*[ \t]*>)[ \t]*$`)
	thematicBreak  = regexp.MustCompile(`^(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	atxHeading     = regexp.MustCompile(`^#{1,6}(?:[ \t]|$)`)
)

// hidingElements are elements whose content GitHub's sanitizer or a browser never shows.
var hidingElements = []string{"script", "style", "textarea", "template", "noscript", "noembed", "noframes", "iframe", "xmp", "title", "plaintext", "object", "svg", "math"}

// hiddenOpener reports whether s starts a construct a reader never sees, and its closer.
func hiddenOpener(s string) (closer string, n int) {
	switch {
	case strings.HasPrefix(s, "<!--"):
		return "-->", 4
	case strings.HasPrefix(s, "<![CDATA["):
		return "]]>", 9
	case strings.HasPrefix(s, "<!") && len(s) > 2 && isASCIILetter(s[2]):
		return ">", 2
	case strings.HasPrefix(s, "<?"):
		return "?>", 2
	}
	for _, e := range hidingElements {
		if tagAt(s, "<"+e) {
			return "</" + e + ">", 1 + len(e)
		}
	}
	return "", 0
}

// htmlHiddenBlockStart reports whether a line starts an HTML block whose content is hidden:
// CommonMark types 2 to 5 and the hiding elements of type 1 (and beyond: <iframe> and the like
// start a type 6 block, but their content is dropped all the same).
func htmlHiddenBlockStart(content string) (closer string, n int) {
	return hiddenOpener(content)
}

func hasHiddenOpener(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '<' {
			if _, n := hiddenOpener(s[i:]); n > 0 {
				return true
			}
		}
	}
	return false
}

// tagAt reports whether s starts with the tag name prefix (case-insensitive) followed by the end
// of the tag name.
func tagAt(s, prefix string) bool {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return false
	}
	if len(s) == len(prefix) {
		return true
	}
	switch s[len(prefix)] {
	case ' ', '\t', '>', '/', '\n':
		return true
	}
	return false
}

// interruptsParagraph reports whether a line's content starts a block that ends a paragraph.
func interruptsParagraph(content string, paraQuoted bool) bool {
	if isBlank(content) {
		return true
	}
	if content[0] == '>' {
		return !paraQuoted
	}
	if fenceOpenRE.MatchString(content) || atxHeading.MatchString(content) || thematicBreak.MatchString(content) {
		return true
	}
	if _, n := hiddenOpener(content); n > 0 {
		return true
	}
	if htmlPreStart.MatchString(content) || htmlBlockStart.MatchString(content) {
		return true
	}
	if n, _, ok := listMarker(content); ok && !isBlank(content[n:]) {
		return content[0] == '-' || content[0] == '*' || content[0] == '+' || strings.HasPrefix(content, "1.") || strings.HasPrefix(content, "1)")
	}
	return false
}

// listMarker reports a list item marker at the start of content: its width and the padding
// that follows it (1 to 4 columns; 1 when the item is blank or starts with indented code).
func listMarker(content string) (n, pad int, ok bool) {
	switch {
	case content[0] == '-' || content[0] == '*' || content[0] == '+':
		n = 1
	default:
		for n < len(content) && n < 9 && content[n] >= '0' && content[n] <= '9' {
			n++
		}
		if n == 0 || n >= len(content) || (content[n] != '.' && content[n] != ')') {
			return 0, 0, false
		}
		n++
	}
	if n < len(content) && content[n] != ' ' && content[n] != '\t' {
		return 0, 0, false
	}
	if thematicBreak.MatchString(content) {
		return 0, 0, false
	}
	rest := content[n:]
	spaces := len(rest) - len(strings.TrimLeft(rest, " \t"))
	if isBlank(rest) || spaces > 4 {
		return n, 1, true
	}
	return n, spaces, true
}

// stripQuotes removes the blockquote markers (and the optional space after each) of a line.
func stripQuotes(content string) string {
	for {
		c := strings.TrimLeft(content, " \t")
		if !strings.HasPrefix(c, ">") || indentCols(content) > 3 {
			return content
		}
		content = c[1:]
		if strings.HasPrefix(content, " ") {
			content = content[1:]
		}
	}
}

// indentCols counts leading whitespace in columns (tab stops every 4).
func indentCols(s string) int {
	col := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col
		}
	}
	return col
}

func trimLeftWS(s string) string { return strings.TrimLeft(s, " \t") }

// isBlank follows CommonMark: only spaces and tabs.
func isBlank(s string) bool { return trimLeftWS(s) == "" }

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// findRun finds, from i, a backtick run of exactly k and returns the index just past it, or -1.
func findRun(s string, i, k int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		n := runLen(s, i, '`')
		if n == k {
			return i + n
		}
		i += n
	}
	return -1
}

// indexFold is strings.Index, ASCII case-insensitive (closers are ASCII).
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if asciiEqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// asciiEqualFold compares ASCII case-insensitively; unlike strings.EqualFold it never folds
// non-ASCII look-alikes (the Kelvin sign, the long s) onto ASCII letters.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

// ASCIIEqualFold is asciiEqualFold for other packages (the slash-command parser).
func ASCIIEqualFold(a, b string) bool { return asciiEqualFold(a, b) }

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isASCIIPunct(c byte) bool {
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~')
}
