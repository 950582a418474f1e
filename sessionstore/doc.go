// Package sessionstore keeps Claude Code session transcripts in SQLite or
// PostgreSQL and feeds them back, trimmed and repaired, when a session is
// resumed.
//
// One Store persists every transcript line as written, and its load
// pipeline trims, expires, prunes and repairs on the way out; nothing stored
// is ever rewritten. docs/seed-map.md maps the specification's three store
// layers to this one type.
//
// Lifecycle:
//
//  1. Open a database file (WAL, busy timeout, embedded migrations), or
//     OpenURL a path, sqlite://PATH or postgres://… URL (pgx; embedded
//     migrations under migrations/postgres; the database's clock). Several
//     processes — on several machines, for PostgreSQL — may open and append
//     to the same store at once. Both backends are one Store: the same
//     queries (placeholders rebound), the same pipeline.
//  2. Write: Mirror each `transcript_mirror` stream-json line the CLI prints
//     under --session-mirror (or Import an existing JSONL file or a whole
//     projects folder; or Append entries directly). Rows are stored exactly as
//     the CLI wrote them, deduplicated on uuid per key, and never changed.
//     With SetOutbox, writes the database cannot take now (an outage) are
//     kept and retried, spooled at Close, and made later by ReplayOutbox.
//  3. Read: Load returns the raw rows (the SDK's SessionStore protocol;
//     storetest holds its 14 contracts). LoadForResume runs the pipeline
//     expire → trim → prune → repair on a copy; LastReport says what each
//     stage did. Materialize writes that result (and every subagent
//     transcript) into a config dir, so `CLAUDE_CONFIG_DIR=dir
//     CLAUDE_CODE_PROJECT_DIR_NAME=<project key> claude --resume=<id>` replays
//     exactly it; CopyCredentials puts the user's login beside it.
//  4. Close.
//
// For `flower runs --store`: PutRun records a run's manifest row, Runs lists
// them.
//
// For `flower sessions`: Sessions lists every stored session, Find resolves
// an id (or a unique prefix), Export writes the raw JSONL, LoadForResume +
// WriteJSONL give the trimmed view, LastReport the report, Import adopts.
//
// How the pipeline runs: two passes, so a session is never held in memory
// whole (Materialize streams from SQLite to the file). On append, each line's
// facts (type, uuid, parent, message id, tool ids, result sizes, denial
// marks) are derived and stored beside it; the first pass reads only those
// and plans every stage; the second reads the lines once, passes untouched
// lines on byte for byte and splices the planned edits into the others.
//
// Choices:
//
//   - A turn is one model response: the assistant lines sharing one
//     message.id. A tool result's age is the number of turns after the turn
//     of its tool_use; "outside the last keep_recent turns" means age ≥
//     keep_recent. Each transcript (main and every subagent) counts its own.
//   - EphemeralPolicy.MaxChars is the upper bound of what expiry throws away:
//     an ephemeral result longer than that is left to TrimPolicy, which spills
//     it (its default MinChars is the same 2000, so the two policies split the
//     results between them). MaxChars ≤ 0 means no bound.
//   - Trim writes the texts it removes into one spill file per load,
//     <workspace>/<spill_dirname>/resume-<hash>.txt, each under a header
//     line, and replaces each result's text by a pointer naming the file and
//     the lines that hold it (Read's offset and limit), followed by the first
//     PreviewChars characters. One file, not one per result: creating
//     thousands of small files cost more than the rest of a resume. The name
//     hashes the ids it holds, and stored results never change, so a reload
//     reuses the file. Only message.content changes; toolUseResult (the
//     CLI's structured copy, which it does not send to the model) is left as
//     it was.
//   - Prune removes every permission denial but the last PrunePolicy.KeepDenials
//     (the tool_use block and its tool_result block, and the lines that held
//     only them); the parentUuid chain is relinked around removed lines.
//     A denial is a tool_result line with toolDenialKind set or
//     permissionDecision.decision "reject". KeepDenials < 0 turns pruning off.
//   - Repair gives every tool_use without a tool_result a synthetic error
//     result (RepairText) on a new line whose uuid is derived from the
//     tool_use id, so entries the CLI appends after the resume still chain
//     to it on the next load. (CLI 2.1.328 also patches a transcript that
//     ends in such a call with its own "[Tool call interrupted…]" text; the
//     repair keeps the trimmed view equal to what is sent, without relying
//     on that.)
//   - CopyCredentials copies .credentials.json and .claude.json without any
//     refreshToken; settings.json is not copied (flower passes its own).
package sessionstore
