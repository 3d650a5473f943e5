package main

import (
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

func inspectQuarantineCommand() *cli.Command {
	return inspectView("quarantine",
		"rejected input kept by --on-error quarantine, with position and reason",
		"cdclog inspect --db PATH quarantine [--limit N] [--json]",
		`Lists the input that 'ingest --on-error quarantine' set aside, oldest first:
malformed messages and protocol violations, each with where it was read, why
it was rejected, when, and its raw bytes.

With --json it prints JSON Lines, one object per rejected message:
   {"seq":1,"source":"in.jsonl","line":3,"offset":120,"reason":"…",
    "time":"2026-01-02T03:04:05Z","raw":"{\"update\":…}"}
raw holds the bytes as text when they are UTF-8; otherwise raw is absent and
raw_base64 holds them in base64. "truncated":true says that only the first
KiB of an over-long message was kept.

Examples:
   cdclog inspect --db state.db quarantine
   cdclog inspect --db state.db quarantine --json | jq -r .raw > rejected.jsonl`,
		runInspectQuarantine, limitFlag())
}

func runInspectQuarantine(c *cli.Context) error {
	return runView(c, "inspect quarantine", inspect.Quarantine)
}
