package ghemu

import "strings"

// checkRefnameFormat is git's check_refname_format (refs.c) without the pattern and normalize
// flags: whether `git check-ref-format <name>` accepts name, or with allowOneLevel, `git
// check-ref-format --allow-onelevel <name>`. A NUL byte, which cannot reach git on a command
// line, is refused.
func checkRefnameFormat(name string, allowOneLevel bool) bool {
	if name == "@" || strings.IndexByte(name, 0) >= 0 {
		return false
	}
	components := 0
	rest := name
	for {
		n := refnameComponent(rest)
		if n <= 0 {
			return false
		}
		components++
		if n == len(rest) {
			break
		}
		rest = rest[n+1:]
	}
	if strings.HasSuffix(name, ".") {
		return false
	}
	return allowOneLevel || components >= 2
}

// refnameComponent is check_refname_component: the length of the component rest starts with,
// 0 for an empty one, -1 for a bad one.
func refnameComponent(rest string) int {
	var last byte
	i := 0
	for ; i < len(rest); i++ {
		c := rest[i]
		if c == '/' {
			break
		}
		switch {
		case c == '.' && last == '.':
			return -1 // ".."
		case c == '{' && last == '@':
			return -1 // "@{"
		case c < 0x20 || c == 0x7f || c == ' ' || c == ':' || c == '?' || c == '[' || c == '\\' || c == '^' || c == '~' || c == '*':
			return -1
		}
		last = c
	}
	if i == 0 {
		return 0
	}
	if rest[0] == '.' || strings.HasSuffix(rest[:i], ".lock") {
		return -1
	}
	return i
}
