package main

import (
	"fmt"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/policy/egress"
)

// networkSettings are the `network` and `allow-hosts` inputs.
type networkSettings struct {
	mode  string // "" leaves it to studio.json, else allow-list
	hosts []string
	allow egress.List
}

// networkInputs reads `network` (allow-list, model-only or open) and `allow-hosts` (entries
// separated by commas, spaces or new lines); every bad entry is named.
func networkInputs(mode, hosts string) (networkSettings, error) {
	var s networkSettings
	if mode != "" {
		m, err := egress.ParseMode(mode)
		if err != nil {
			return s, fmt.Errorf("the network input: %w", err)
		}
		s.mode = string(m)
	}
	s.hosts = egress.SplitEntries(hosts)
	var err error
	if s.allow, err = egress.ParseList(s.hosts); err != nil {
		return s, fmt.Errorf("the allow-hosts input: %w", err)
	}
	return s, nil
}

// initial is the network the egress proxy starts with, before the run has read studio.json and
// the task (bot.configureNetwork sets the rest): the input's mode and hosts, nothing else.
func (s networkSettings) initial() *codex.NetworkConfig {
	mode := egress.DefaultMode
	if s.mode != "" {
		mode = egress.Mode(s.mode)
	}
	return &codex.NetworkConfig{Mode: mode, Allow: s.allow}
}

// settings are the bot's view of the inputs.
func (s networkSettings) settings() bot.NetworkSettings {
	return bot.NetworkSettings{NetworkMode: s.mode, AllowHosts: s.hosts}
}
