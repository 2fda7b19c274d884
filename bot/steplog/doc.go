// Package steplog is the step log: the studio's own workflow commands and, fenced, every text it
// relays (Codex's final message and stderr, verification output, review verdicts, GitHub's
// answers in retry lines, skip reasons).
//
// The runner acts on any line of a step's stdout or stderr that reads as a workflow command, and
// one `::stop-commands::X` turns commands off for the rest of the step: a relayed line could
// forge an output, an annotation or a mask, or silence the studio's later add-mask of a refreshed
// token. So each relayed text is written inside a `::stop-commands::<token>` ... `::<token>::`
// block with a fresh random token the text does not hold, and the studio's own commands are
// written between blocks. Both go to one stream under one lock: the runner reads stdout and
// stderr on two threads into one command state, so a block on one stream could swallow a command
// on the other.
//
// It imports nothing of the studio's; cmd/studio wires it.
package steplog
